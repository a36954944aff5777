"""The row-event codec: TABLE_MAP, WRITE/UPDATE/DELETE_ROWS v2, ROWS_QUERY and each
column type's value encoding, round trips and bad input.

Round trips go through whole events (:func:`encode_event` / :func:`decode_event`, CRC
on), so the type map and the body codecs are both exercised. Independent readers of the
same bytes are in test_binlog_rows_readers.py.
"""

from __future__ import annotations

import decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from row_cases import EVERY_TYPE, EVERY_TYPE_ROWS, Value, cases, every_type_table, tables

from rpl.core.binlog import events as ev
from rpl.core.engine.schema import ColumnSchema

Image = tuple[Value, ...]


def roundtrip(event: ev.Event) -> ev.Event:
    """``event`` through its bytes and back (the codec's type map picks the class)."""
    raw = ev.encode_event(event, server_id=3, timestamp=1)
    header, back = ev.decode_event(raw, checksum=True)
    assert header.type_code == event.type_code
    assert ev.encode_event(back, server_id=3, timestamp=1) == raw
    return back


def as_read(table_map: ev.TableMapEvent) -> ev.TableMapEvent:
    """``table_map`` as a reader of its bytes has it: with MINIMAL metadata no column
    names or ENUM/SET members, so the writer's own map reads those rows.
    """
    decoded = roundtrip(table_map)
    assert isinstance(decoded, ev.TableMapEvent)
    return decoded if table_map.row_metadata == "FULL" else table_map


@st.composite
def table_and_rows(draw: st.DrawFn) -> tuple[ev.TableMapEvent, list[Image]]:
    table_map, strategies = draw(tables())
    rows = draw(st.lists(st.tuples(*strategies), min_size=1, max_size=4))
    return table_map, rows


@settings(max_examples=150, deadline=None)
@given(table_and_rows(), st.sampled_from([ev.WriteRowsEvent, ev.DeleteRowsEvent]))
def test_rows_round_trip_every_type_and_null_pattern(
    case: tuple[ev.TableMapEvent, list[Image]],
    cls: type[ev.WriteRowsEvent] | type[ev.DeleteRowsEvent],
) -> None:
    table_map, rows = case
    event = cls.of(table_map, rows)
    back = roundtrip(event)
    assert back == event
    assert isinstance(back, cls)
    assert back.images(as_read(table_map)) == tuple(rows)


@settings(max_examples=100, deadline=None)
@given(tables())
def test_table_map_round_trip(case: tuple[ev.TableMapEvent, object]) -> None:
    table_map, _ = case
    back = roundtrip(table_map)
    assert isinstance(back, ev.TableMapEvent)
    if table_map.row_metadata == "FULL":
        assert back == table_map  # names, members, key and every charset come back
    else:
        assert back.row_metadata == "MINIMAL" and back.primary_key == ()
        for mine, read in zip(table_map.columns, back.columns, strict=True):
            assert (read.type_code, read.metadata, read.nullable, read.unsigned) == (
                mine.type_code,
                mine.metadata,
                mine.nullable,
                mine.unsigned,
            )
            assert read.name is None and read.members == ()


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_update_before_and_after_images_minimal(data: st.DataObject) -> None:
    """binlog_row_image=MINIMAL: the before image is the key, the after image the
    changed columns; absent columns are not in the images.
    """
    table_map, strategies = data.draw(tables())
    width = len(table_map.columns)
    before = [
        True,
        *data.draw(st.lists(st.booleans(), min_size=width - 1, max_size=width - 1)),
    ]  # the key, at least
    after = data.draw(st.lists(st.booleans(), min_size=width, max_size=width).filter(any))
    pairs = data.draw(
        st.lists(
            st.tuples(
                st.tuples(*[s for s, bit in zip(strategies, before, strict=True) if bit]),
                st.tuples(*[s for s, bit in zip(strategies, after, strict=True) if bit]),
            ),
            min_size=1,
            max_size=3,
        )
    )
    event = ev.UpdateRowsEvent.of_updates(
        table_map, pairs, columns=before, columns_after=after, flags=0
    )
    back = roundtrip(event)
    assert back == event and isinstance(back, ev.UpdateRowsEvent)
    assert back.columns == tuple(before) and back.columns_after == tuple(after)
    assert back.updates(as_read(table_map)) == tuple(pairs)
    assert back.flags & ev.STMT_END_F == 0


def test_full_image_of_every_type_and_a_multi_row_update() -> None:
    table_map = every_type_table("MINIMAL")
    assert all(len(row) == len(EVERY_TYPE) for row in EVERY_TYPE_ROWS)
    read = roundtrip(table_map)
    assert isinstance(read, ev.TableMapEvent)
    write = roundtrip(ev.WriteRowsEvent.of(table_map, EVERY_TYPE_ROWS))
    assert isinstance(write, ev.WriteRowsEvent)
    images = write.images(read)
    # ENUM and SET values need their members, which only FULL metadata carries
    named = as_read(every_type_table("FULL"))
    assert write.images(named) == tuple(EVERY_TYPE_ROWS)
    enum_at = [i for i, (c, _) in enumerate(EVERY_TYPE) if c.type_name == "ENUM"]
    assert [images[0][i] for i in enum_at] == [0, 300]  # index numbers, not names
    update = ev.UpdateRowsEvent.of_updates(
        table_map,
        list(zip(EVERY_TYPE_ROWS, EVERY_TYPE_ROWS[1:] + EVERY_TYPE_ROWS[:1], strict=True)),
    )
    back = roundtrip(update)
    assert isinstance(back, ev.UpdateRowsEvent)
    assert [list(pair) for pair in back.updates(named)] == [
        [EVERY_TYPE_ROWS[i], EVERY_TYPE_ROWS[(i + 1) % 3]] for i in range(3)
    ]


def test_rows_query_round_trip_and_its_length_byte() -> None:
    text = "INSERT INTO t VALUES " + "(1)," * 100 + "(2)"
    event = ev.RowsQueryEvent(text)
    assert roundtrip(event) == event
    assert event.encode_body()[0] == len(text) & 0xFF


# --- byte layouts checked by hand against MySQL's sources ---------------------------


def column(
    type_name: str,
    length: int | None = None,
    scale: int | None = None,
    unsigned: bool = False,
    members: tuple[str, ...] = (),
) -> ev.BinlogColumn:
    return ev.binlog_column(ColumnSchema("c", type_name, length, unsigned, scale=scale), members)


@pytest.mark.parametrize(
    ("col", "value", "packed"),
    [
        (
            column("DECIMAL", 14, scale=4),
            decimal.Decimal("1234567890.1234"),
            bytes.fromhex("810DFB38D204D2"),
        ),  # strings/decimal.cc's own example, sign bit set
        (
            column("DECIMAL", 14, scale=4),
            decimal.Decimal("-1234567890.1234"),
            bytes.fromhex("7EF204C72DFB2D"),
        ),
        (column("DATE"), "2024-02-29", (29 | 2 << 5 | 2024 << 9).to_bytes(3, "little")),
        (
            column("DATETIME", 0),
            "2024-02-29 12:34:56",
            (0x8000000000 + ((2024 * 13 + 2) << 22 | 29 << 17 | 12 << 12 | 34 << 6 | 56)).to_bytes(
                5, "big"
            ),
        ),
        (
            column("TIMESTAMP", 3),
            "1970-01-01 00:00:01.500",
            b"\0\0\0\1" + (5000).to_bytes(2, "big"),
        ),
        (column("TIME", 0), "-00:00:01", (0x800000 - 1).to_bytes(3, "big")),
        (column("TIME", 2), "-00:00:01.50", (0x800000 - 2).to_bytes(3, "big") + bytes((0xCE,))),
        (
            column("TIME", 6),
            "-00:00:01.500000",
            (0x800000000000 - (1 << 24) - 500000).to_bytes(6, "big"),
        ),
        (column("YEAR"), 2155, bytes((255,))),
        (column("VARCHAR", 63), "é", b"\x02\xc3\xa9"),  # 252 bytes at most: 1-byte length
        (column("VARCHAR", 64), "é", b"\x02\x00\xc3\xa9"),  # 256: 2-byte length
        (column("CHAR", 64), "a", b"\x01\x00a"),
        (column("MEDIUMBLOB"), b"xy", b"\x02\x00\x00xy"),
        (column("ENUM", members=("a", "b")), "b", b"\x02"),
        (column("SET", members=tuple("abcdefghi")), "a,i", b"\x01\x01"),
        (column("BIT", 10), 513, b"\x02\x01"),
        (column("MEDIUMINT", unsigned=True), 2**24 - 1, b"\xff\xff\xff"),
    ],
)
def test_value_bytes(col: ev.BinlogColumn, value: Value, packed: bytes) -> None:
    assert ev.encode_value(col, value) == packed
    assert ev.decode_value(col, packed + b"tail", 0) == (value, len(packed))


@pytest.mark.parametrize(
    ("col", "type_code", "metadata"),
    [
        (column("CHAR", 10), ev.MYSQL_TYPE_STRING, b"\xfe\x28"),
        (column("CHAR", 255), ev.MYSQL_TYPE_STRING, bytes((0xFE ^ 0x30, 0xFC))),  # 1020 bytes
        (column("BINARY", 4), ev.MYSQL_TYPE_STRING, b"\xfe\x04"),
        (column("VARCHAR", 300), ev.MYSQL_TYPE_VARCHAR, (1200).to_bytes(2, "little")),
        (column("DECIMAL", 20, scale=6), ev.MYSQL_TYPE_NEWDECIMAL, b"\x14\x06"),
        (column("ENUM", members=tuple(map(str, range(256)))), ev.MYSQL_TYPE_STRING, b"\xf7\x02"),
        (column("SET", members=tuple(map(str, range(33)))), ev.MYSQL_TYPE_STRING, b"\xf8\x08"),
        (column("BIT", 10), ev.MYSQL_TYPE_BIT, b"\x02\x01"),
        (column("DATETIME", 4), ev.MYSQL_TYPE_DATETIME2, b"\x04"),
        (column("LONGTEXT"), ev.MYSQL_TYPE_BLOB, b"\x04"),
        (column("DOUBLE"), ev.MYSQL_TYPE_DOUBLE, b"\x08"),
        (column("DATE"), ev.MYSQL_TYPE_DATE, b""),
    ],
)
def test_table_map_types_and_metadata(
    col: ev.BinlogColumn, type_code: int, metadata: bytes
) -> None:
    assert (col.type_code, col.metadata) == (type_code, metadata)


def test_table_map_layout() -> None:
    """Post header, names, types, metadata, NULL bitmap, then SIGNEDNESS and
    DEFAULT_CHARSET as MINIMAL writes them.
    """
    columns = (column("INT"), column("INT", unsigned=True), column("VARCHAR", 10), column("BLOB"))
    body = ev.TableMapEvent(0x0102030405, "d", "tb", columns).encode_body()
    assert body == b"".join(
        (
            bytes.fromhex("050403020100"),
            b"\x01\x00",
            b"\x01d\x00",
            b"\x02tb\x00",
            b"\x04",
            bytes((3, 3, 15, 252)),
            b"\x03",
            b"\x28\x00\x02",
            b"\x0f",
            b"\x01\x01\x40",  # SIGNEDNESS: the second numeric column, most significant bit first
            # COLUMN_CHARSET: 2 character columns, 1 not of the most used collation, and
            # 2 < 1 + 2 * 1: each column's collation (255 packed is 0xfc + 2 bytes; 63 binary)
            b"\x03\x04\xfc\xff\x00\x3f",
        )
    )
    three = (column("VARCHAR", 10), column("TEXT"), column("BLOB"))
    body = ev.TableMapEvent(1, "d", "tb", three).encode_body()
    # 3 < 1 + 2 * 1 is false: DEFAULT_CHARSET, the default then (index, collation) pairs
    assert body.endswith(b"\x02\x05\xfc\xff\x00\x02\x3f")


def test_rows_layout() -> None:
    table_map = ev.TableMapEvent(7, "d", "t", (column("INT"), column("VARCHAR", 10)))
    event = ev.WriteRowsEvent.of(table_map, [(1, None), (2, "ab")])
    assert event.encode_body() == b"".join(
        (
            bytes.fromhex("070000000000"),
            b"\x01\x00",
            b"\x02\x00",
            b"\x02",
            b"\x03",
            b"\x02",
            (1).to_bytes(4, "little"),
            b"\x00",
            (2).to_bytes(4, "little"),
            b"\x02ab",
        )
    )


def test_event_classes_are_in_the_type_map() -> None:
    for code, cls in (
        (19, ev.TableMapEvent),
        (29, ev.RowsQueryEvent),
        (30, ev.WriteRowsEvent),
        (31, ev.UpdateRowsEvent),
        (32, ev.DeleteRowsEvent),
    ):
        assert ev.EVENT_CLASSES[code] is cls
        assert ev.POST_HEADER_LENGTHS_8029[code - 1] == (
            ev.TABLE_MAP_POST_HEADER_LEN
            if code == 19
            else 0
            if code == 29
            else ev.ROWS_POST_HEADER_LEN
        )


# --- bad input ----------------------------------------------------------------------


def test_truncated_row_is_an_event_error() -> None:
    table_map = every_type_table()
    event = ev.WriteRowsEvent.of(table_map, EVERY_TYPE_ROWS[:1])
    for cut in range(1, len(event.rows_data)):
        short = ev.WriteRowsEvent(event.table_id, event.flags, event.columns, event.rows_data[:cut])
        with pytest.raises(ev.EventError, match="truncated|needs"):
            short.images(table_map)


def test_update_without_after_image_is_an_event_error() -> None:
    table_map = ev.TableMapEvent(7, "d", "t", (column("INT"),))
    before = ev.WriteRowsEvent.of(table_map, [(1,)]).rows_data
    event = ev.UpdateRowsEvent(7, 1, (True,), before, (True,))
    with pytest.raises(ev.EventError, match="without its after image"):
        event.updates(table_map)


def test_column_count_or_table_id_mismatch_is_an_event_error() -> None:
    table_map = ev.TableMapEvent(7, "d", "t", (column("INT"), column("INT")))
    event = ev.WriteRowsEvent.of(table_map, [(1, 2)])
    narrow = ev.TableMapEvent(7, "d", "t", (column("INT"),))
    with pytest.raises(ev.EventError, match="rows event has 2 columns, the table map of d.t 1"):
        event.images(narrow)
    with pytest.raises(ev.EventError, match="table_id 7 read with the table map of table_id 8"):
        event.images(ev.TableMapEvent(8, "d", "t", table_map.columns))
    with pytest.raises(ValueError, match="row image has 1 values for 2 columns"):
        ev.WriteRowsEvent.of(table_map, [(1,)])
    with pytest.raises(ValueError, match="NULL for the NOT NULL column"):
        ev.WriteRowsEvent.of(
            ev.TableMapEvent(
                7, "d", "t", (ev.binlog_column(ColumnSchema("k", "INT", nullable=False)),)
            ),
            [(None,)],
        )


def test_unknown_column_type_is_an_event_error() -> None:
    table_map = ev.TableMapEvent(7, "d", "t", (column("INT"),))
    body = bytearray(table_map.encode_body())
    body[body.index(b"\x01\x03") + 1] = 20  # MYSQL_TYPE_TYPED_ARRAY: no binlog layout here
    raw = ev.encode_event(ev.UnknownEvent(19, bytes(body)), server_id=1, timestamp=0)
    with pytest.raises(ev.EventError, match="column type 20 is not one this codec reads"):
        ev.decode_event(raw, checksum=True)


def test_a_value_that_does_not_fit_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="does not fit DECIMAL"):
        ev.encode_value(column("DECIMAL", 3, scale=1), decimal.Decimal("100"))
    with pytest.raises(ValueError, match="not a member of ENUM"):
        ev.encode_value(column("ENUM", members=("a",)), "b")
    with pytest.raises(OverflowError):
        ev.encode_value(column("TINYINT"), 128)
    with pytest.raises(ValueError, match="has no row encoding"):
        ev.binlog_column(ColumnSchema("g", "GEOMETRY"))


@settings(max_examples=150, deadline=None)
@given(table_and_rows(), st.data())
def test_damaged_bodies_raise_event_error_only(
    case: tuple[ev.TableMapEvent, list[Image]], data: st.DataObject
) -> None:
    """Any cut or flipped byte in a TABLE_MAP or rows body: the event decodes, or
    EventError; reading the rows likewise. Never IndexError or struct.error.
    """
    table_map, rows = case
    for event in (table_map, ev.WriteRowsEvent.of(table_map, rows)):
        body = bytearray(event.encode_body())
        if data.draw(st.booleans()):
            body = body[: data.draw(st.integers(0, len(body) - 1))]
        else:
            at = data.draw(st.integers(0, len(body) - 1))
            body[at] ^= data.draw(st.integers(1, 255))
        raw = ev.encode_event(
            ev.UnknownEvent(event.type_code, bytes(body)), server_id=1, timestamp=0
        )
        try:
            _, back = ev.decode_event(raw, checksum=True)
            if isinstance(back, ev.RowsEvent):
                back.images(table_map)
        except ev.EventError:
            pass


@given(cases())
def test_binlog_column_keeps_the_column_attributes(
    case: tuple[ColumnSchema, tuple[str, ...], object],
) -> None:
    schema, members, _ = case
    col = ev.binlog_column(schema, members)
    assert (col.name, col.nullable, col.members) == (schema.name, schema.nullable, members)
    assert col.unsigned == (
        schema.unsigned
        and col.type_code
        in (
            ev.MYSQL_TYPE_TINY,
            ev.MYSQL_TYPE_SHORT,
            ev.MYSQL_TYPE_INT24,
            ev.MYSQL_TYPE_LONG,
            ev.MYSQL_TYPE_LONGLONG,
            ev.MYSQL_TYPE_NEWDECIMAL,
            ev.MYSQL_TYPE_FLOAT,
            ev.MYSQL_TYPE_DOUBLE,
        )
    )
