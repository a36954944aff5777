"""JSON columns in rows events: MySQL's binary JSON (``rpl.core.binlog.events.json_binary``),
the JSON text the engine stores (``rpl.core.json_text``), and a JSON table under ROW from a
source's binlog to a replica's applier.

Checked: hypothesis round trips of documents of every kind (nested objects and arrays,
every scalar, unicode keys, documents past 64 KiB that need the large storage format);
byte layouts worked out from ``sql-common/json_binary.cc``; the same bytes read by
python-mysql-replication's decoder (``pymysqlreplication.json_binary.parse_json``, written
from go-mysql's reader) and through its rows-event parser; damaged documents raising
ValueError only; the engine's normalization and MySQL's errors; a JSON table logged as
rows and applied by an in-process replica. ``mariadb-binlog -v`` cannot be a reader here:
it does not know MySQL's type 245 and stops at the first JSON row (MariaDB's JSON is
LONGTEXT).
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pymysqlreplication import row_event as pmr_rows
from pymysqlreplication.json_binary import parse_json
from row_cases import CHARS
from test_binlog_rows_readers import pmr_events, transaction_file
from test_row_apply import Replication, last_transaction, pair, run

from rpl.core import json_text
from rpl.core.binlog import events as ev
from rpl.core.binlog.events import json_binary as jb
from rpl.core.engine.coercion import coerce, coerce_leniently
from rpl.core.engine.schema import ColumnSchema
from rpl.core.errors import MySQLError
from rpl.core.instance.server import Server
from rpl.core.json_text import JsonOpaque, JsonValue

__all__ = ["pair"]  # the fixture, imported for the server-level tests

INT64_MIN, UINT64_MAX = -(2**63), 2**64 - 1

SCALARS: st.SearchStrategy[JsonValue] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**15), 2**15),
    st.integers(INT64_MIN, UINT64_MAX),
    st.sampled_from([-(2**31), 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63, UINT64_MAX]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(CHARS, max_size=20),
)
DOCUMENTS: st.SearchStrategy[JsonValue] = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=6),
        st.dictionaries(st.text(CHARS, max_size=8), children, max_size=6),
    ),
    max_leaves=40,
)
"""Documents of every kind: objects (unicode keys, the empty key) and arrays to a few
levels, and every scalar MySQL's parser makes from text."""


def same(a: JsonValue, b: JsonValue) -> bool:
    """Equal and of the same kinds all the way down (1 is not 1.0, True is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


def pmr_form(value: JsonValue) -> object:
    """``value`` as python-mysql-replication returns it: keys and strings as UTF-8 bytes."""
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, list):
        return [pmr_form(v) for v in value]
    if isinstance(value, dict):
        return {k.encode("utf-8"): pmr_form(v) for k, v in value.items()}
    return value


def containers(data: bytes) -> list[int]:
    """The type byte of every object and array in a document, outermost first."""
    found: list[int] = []

    def walk(type_code: int, start: int) -> None:
        if type_code > jb.JSONB_TYPE_LARGE_ARRAY:
            return
        found.append(type_code)
        large = type_code in (jb.JSONB_TYPE_LARGE_OBJECT, jb.JSONB_TYPE_LARGE_ARRAY)
        width = 4 if large else 2
        count = int.from_bytes(data[start : start + width], "little")
        keys = count * (width + 2) if type_code in (0, 1) else 0
        for i in range(count):
            entry = start + 2 * width + keys + i * (1 + width)
            child = data[entry]
            if child <= jb.JSONB_TYPE_LARGE_ARRAY:
                offset = int.from_bytes(data[entry + 1 : entry + 1 + width], "little")
                walk(child, start + offset)

    walk(data[0], 1)
    return found


# --- the binary format ------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(DOCUMENTS)
def test_documents_round_trip_and_python_mysql_replication_reads_them(value: JsonValue) -> None:
    data = jb.encode(value)
    assert same(jb.decode(data), value)
    assert parse_json(data[0], data[1:]) == pmr_form(value)
    text = json_text.to_text(value)
    assert jb.decode_text(data) == text
    assert json_text.normalize(text) == text  # the printed form is a fixed point
    assert jb.encode_text(text) == data  # and encodes to the same bytes


@settings(max_examples=200, deadline=None)
@given(DOCUMENTS, st.sampled_from([None, 1, 2]))
def test_any_json_text_encodes_to_its_meaning(value: JsonValue, indent: int | None) -> None:
    """Text as a client writes it (any spacing, keys in any order) stores and logs as its
    meaning: decode(encode(text)) is the normalized text, which Python reads back equal."""
    text = json.dumps(value, indent=indent, ensure_ascii=indent == 2)
    stored = json_text.normalize(text)
    assert jb.decode_text(jb.encode_text(text)) == stored
    assert same(json_text.parse(stored), json.loads(text))


def _big(size: int) -> dict[str, JsonValue]:
    return {f"k{i:05d}": "v" * 90 for i in range(size // 100)}


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS, st.integers(70_000, 150_000), st.booleans())
def test_large_documents_use_large_storage_and_round_trip(
    small: JsonValue, size: int, as_array: bool
) -> None:
    big: JsonValue = list(_big(size).values()) if as_array else _big(size)
    value: JsonValue = {"big": big, "small": small, "n": [1, -70000, 2**40, None]}
    data = jb.encode(value)
    assert len(data) > 65535
    assert same(jb.decode(data), value)
    assert parse_json(data[0], data[1:]) == pmr_form(value)
    kinds = containers(data)
    assert kinds[0] == jb.JSONB_TYPE_LARGE_OBJECT
    # in a large parent each child container chooses again: the big one is large, the
    # others (the int list, small's containers) fit small
    assert kinds.count(jb.JSONB_TYPE_LARGE_OBJECT) + kinds.count(jb.JSONB_TYPE_LARGE_ARRAY) == 2
    assert jb.JSONB_TYPE_SMALL_ARRAY in kinds


def test_a_big_child_of_a_small_parent_makes_the_parent_large() -> None:
    """``small_parent``: a child that does not fit small fails its small parent's attempt,
    so the parent is large too; siblings in a large parent choose for themselves."""
    data = jb.encode([[_big(70_000)], [1]])
    assert containers(data) == [
        jb.JSONB_TYPE_LARGE_ARRAY,
        jb.JSONB_TYPE_LARGE_ARRAY,  # [big]: large because big is
        jb.JSONB_TYPE_LARGE_OBJECT,
        jb.JSONB_TYPE_SMALL_ARRAY,  # [1]: a sibling in a large parent fits small
    ]


def test_byte_layout_of_a_small_object() -> None:
    """{"b": [true, null], "a": 1} laid out by hand from json_binary.cc."""
    assert jb.encode_text('{"b": [true, null], "a": 1}') == bytes.fromhex(
        "00"  # small object
        "0200"
        "1e00"  # 2 members, 30 bytes
        "1200"
        "0100"
        "1300"
        "0100"  # keys at 18 and 19, 1 byte each ("a" before "b")
        "05"
        "0100"  # "a": int16 1, inlined
        "02"
        "1400"  # "b": small array at 20
        "61"
        "62"  # the keys
        "0200"
        "0a00"
        "04"
        "0100"
        "04"
        "0000"  # [true, null]: 2 elements, 10 bytes, inlined
    )


def test_scalars_and_their_types() -> None:
    cases: list[tuple[str, int, bytes]] = [
        ("null", 0x04, b"\x00"),
        ("false", 0x04, b"\x02"),
        ("-32768", 0x05, struct.pack("<h", -32768)),
        ("32768", 0x07, struct.pack("<i", 32768)),
        ("2147483648", 0x09, struct.pack("<q", 2**31)),  # Json_int from rapidjson's Uint
        ("4294967296", 0x0A, struct.pack("<Q", 2**32)),  # Json_uint from its Uint64
        ("18446744073709551615", 0x0A, b"\xff" * 8),
        ("-9223372036854775808", 0x09, struct.pack("<q", INT64_MIN)),
        ("18446744073709551616", 0x0B, struct.pack("<d", 2.0**64)),  # past 64 bits: a double
        ("1.0", 0x0B, struct.pack("<d", 1.0)),
        ('"' + "x" * 200 + '"', 0x0C, b"\xc8\x01" + b"x" * 200),  # 200: 7 bits a byte
    ]
    for text, type_code, body in cases:
        assert jb.encode_text(text) == bytes((type_code,)) + body, text
    # int32 is inlined in a large container, not in a small one
    large = jb.encode([100_000, *(["x" * 70_000])])
    assert large[0] == jb.JSONB_TYPE_LARGE_ARRAY and large[9:14] == b"\x07" + struct.pack(
        "<i", 100_000
    )
    small = jb.encode([100_000])
    assert small[5:8] == b"\x07\x07\x00"  # int32 at offset 7, after the header


def test_what_only_mysql_writes_reads_too() -> None:
    """uint16/uint32 (from SQL values), opaque values, an empty document (null)."""
    assert jb.decode(b"\x06\xff\xff") == 65535
    assert jb.decode(b"\x02\x01\x00\x07\x00\x06\x05\x00") == [5]  # inlined uint16
    opaque = jb.decode(b"\x0f\xf6\x02\x01\x81")
    assert opaque == JsonOpaque(246, b"\x01\x81")
    assert jb.encode(opaque) == b"\x0f\xf6\x02\x01\x81"
    assert json_text.to_text(opaque) == '"base64:type246:AYE="'
    assert jb.decode(b"") is None


def test_keys_out_of_mysql_order_are_refused() -> None:
    """``Value::is_valid``: keys ascend by length, then bytes."""
    assert jb.decode(jb.encode_text('{"bb": 1, "c": 2}')) == {"c": 2, "bb": 1}
    bad = jb.encode_text('{"a": 1, "b": 2}').replace(b"ab", b"ba")
    with pytest.raises(ValueError, match="order"):
        jb.decode(bad)


@settings(max_examples=300, deadline=None)
@given(DOCUMENTS, st.data())
def test_damaged_documents_raise_value_error_only(value: JsonValue, data: st.DataObject) -> None:
    raw = bytearray(jb.encode(value))
    if data.draw(st.booleans()) and len(raw) > 1:
        del raw[data.draw(st.integers(1, len(raw) - 1)) :]
    else:
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] ^= data.draw(st.integers(1, 255))
    try:
        jb.decode(bytes(raw))
    except ValueError:
        pass


def test_entries_sharing_a_value_do_not_expand_the_document() -> None:
    """90 nested arrays of 10 bytes whose two entries both point at the next one would read
    as 2**90 arrays: the decoder stops once it has read more values than there are bytes."""
    levels = 90
    doc = bytearray(b"\x02")
    for level in range(levels):
        size = 10 * (levels - level) + 4
        doc += (2).to_bytes(2, "little") + size.to_bytes(2, "little") + b"\x02\x0a\x00" * 2
    doc += b"\x00\x00\x04\x00"  # the innermost, empty array
    with pytest.raises(ValueError, match="more values than it has bytes"):
        jb.decode(bytes(doc))
    assert jb.decode(bytes(doc[:1]) + jb.encode([[[]]])[1:]) == [[[]]]


def test_limits() -> None:
    deep = "[" * 100 + "]" * 100
    assert jb.decode_text(jb.encode_text(deep)) == deep
    with pytest.raises(json_text.JsonDepthError):
        json_text.parse("[" * 100 + "1" + "]" * 100)  # the scalar is the 101st level
    with pytest.raises(ValueError, match="depth"):
        jb.encode(json.loads("[" * 101 + "]" * 101))
    with pytest.raises(json_text.JsonKeyTooBigError):
        json_text.parse(json.dumps({"k" * 65536: 1}))
    assert jb.decode(jb.encode({"k" * 65535: 1})) == {"k" * 65535: 1}


# --- the text ---------------------------------------------------------------------


def test_text_as_mysql_prints_it() -> None:
    cases = {
        '{"b":[true,null],"a":1}': '{"a": 1, "b": [true, null]}',
        '{"bb": 1, "a": 2, "é": 3, "z": 4}': '{"a": 2, "z": 4, "bb": 1, "é": 3}',
        '{"a": 1, "a": 2}': '{"a": 2}',  # the last duplicate wins
        " [ 1.0, 1e2, 0.1, -0.0, 1e15, 1e14, 1e-15, 1e-16, 1.5e300 ] ": (
            "[1.0, 100.0, 0.1, -0.0, 1e15, 100000000000000.0, 0.000000000000001, 1e-16, 1.5e300]"
        ),
        "[1234567890123456.7, 12345678901234567890, -5]": (
            "[1234567890123456.8, 12345678901234567890, -5]"
        ),
        '"tab\\t nl\\n \\u0001 \\u00e9 \\"q\\" \\\\ \\/"': (
            '"tab\\t nl\\n \\u0001 é \\"q\\" \\\\ /"'
        ),
        "{}": "{}",
        "[]": "[]",
    }
    for text, printed in cases.items():
        assert json_text.normalize(text) == printed, text


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "Expecting value"),
        ("{'a': 1}", "Expecting property name"),
        ("[1, 2", "Expecting"),
        ("NaN", "Invalid value."),
        ("1e400", "Number too big to be stored in double."),
        ('"\\ud800"', "The surrogate pair in string is invalid."),
        ("1 2", "Extra data"),
    ],
)
def test_text_mysql_refuses(text: str, reason: str) -> None:
    with pytest.raises(json_text.JsonTextError) as raised:
        json_text.parse(text)
    assert raised.value.reason.startswith(reason)


def test_the_engine_stores_json_as_mysql_prints_it() -> None:
    column = ColumnSchema("j", "JSON")
    assert coerce(column, '{"b": 1,   "a":[1 ,2]}') == '{"a": [1, 2], "b": 1}'
    assert coerce(column, 5) == "5"
    with pytest.raises(MySQLError) as raised:
        coerce(column, "{oops")
    assert raised.value.errno == 3140 and raised.value.sqlstate == "22032"
    assert raised.value.message.startswith('Invalid JSON text: "Expecting property name')
    assert raised.value.message.endswith("at position 1 in value for column 'j'.")
    with pytest.raises(MySQLError) as raised:
        coerce(column, "[" * 101 + "]" * 101)
    assert raised.value.errno == 3157
    with pytest.raises(MySQLError) as raised:
        coerce(column, json.dumps({"k" * 70000: 1}))
    assert raised.value.errno == 3151
    not_null = ColumnSchema("j", "JSON", nullable=False)
    value, warning = coerce_leniently(not_null, None)
    assert value == "null" and warning is not None and warning.errno == 1048


# --- the row codec ----------------------------------------------------------------


def _json_table(metadata: ev.RowMetadata = "FULL") -> ev.TableMapEvent:
    columns = (
        ev.binlog_column(ColumnSchema("id", "INT", nullable=False)),
        ev.binlog_column(ColumnSchema("j", "JSON")),
        ev.binlog_column(ColumnSchema("v", "VARCHAR", 10)),
    )
    return ev.TableMapEvent(9, "db1", "t1", columns, row_metadata=metadata, primary_key=(0,))


def test_binlog_column_and_value_layout() -> None:
    column = ev.binlog_column(ColumnSchema("j", "JSON"))
    assert (column.type_code, column.metadata, column.charset) == (245, b"\x04", None)
    value = '{"a": 1, "b": [true, null]}'
    packed = ev.encode_value(column, value)
    assert packed == (30 + 1).to_bytes(4, "little") + jb.encode_text(value)
    assert ev.value_size(column, packed + b"rest", 0) == len(packed)
    assert ev.decode_value(column, packed + b"rest", 0) == (value, len(packed))
    with pytest.raises(ev.EventError, match="needs 35 bytes"):
        ev.decode_value(column, packed[:-1], 0)
    with pytest.raises(ev.EventError):
        ev.decode_value(column, packed[:4] + b"\x0d" + packed[5:], 0)  # type 0x0d
    assert ev.decode_value(column, b"\0\0\0\0", 0) == ("null", 4)  # empty: null
    with pytest.raises(ValueError):
        ev.encode_value(column, "not json")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), DOCUMENTS.map(json_text.to_text)), min_size=1, max_size=5))
def test_rows_events_round_trip_and_python_mysql_replication_reads_them(
    tmp_path_factory: pytest.TempPathFactory, documents: list[str | None]
) -> None:
    table_map = _json_table()
    rows = [(i, doc, f"v{i}") for i, doc in enumerate(documents)]
    write = ev.WriteRowsEvent.of(table_map, rows)
    raw = ev.encode_event(write, server_id=1, timestamp=1, checksum=True)
    decoded = ev.decode_event(raw, checksum=True)[1]
    assert isinstance(decoded, ev.WriteRowsEvent)
    assert list(decoded.images(table_map)) == rows
    path = transaction_file(tmp_path_factory.mktemp("j") / "binlog.000001", [table_map, write])
    read = [
        row["values"]
        for e in pmr_events(path)
        if isinstance(e, pmr_rows.WriteRowsEvent)
        for row in e.rows
    ]
    assert read == [
        {"id": i, "j": None if doc is None else pmr_form(json_text.parse(doc)), "v": f"v{i}"}
        for i, doc in enumerate(documents)
    ]


# --- a server under ROW -----------------------------------------------------------

JSON_TABLE = "CREATE TABLE d.j (id INT PRIMARY KEY, doc JSON, n INT)"


def _docs(server: Server) -> list[tuple[Any, ...]]:
    return run(server, "SELECT id, doc, n FROM d.j ORDER BY id")


@pytest.mark.parametrize("image", ["FULL", "MINIMAL"])
def test_a_json_table_logs_rows_and_a_replica_applies_them(
    pair: tuple[Server, Server], image: str
) -> None:
    source, replica = pair
    for server in pair:
        run(server, JSON_TABLE)
    run(source, f"SET GLOBAL binlog_row_image = {image}")
    replicate = Replication(source, replica)
    big = json.dumps({f"k{i}": ["x" * 50, i, i / 3] for i in range(1500)})  # > 64 KiB
    statements = [
        'INSERT INTO d.j VALUES (1, \'{"b": [true, null],  "a": 1}\', 1),'
        ' (2, \'[1.0, "héllo", {"ü": -70000}]\', 2), (3, NULL, 3)',
        f"INSERT INTO d.j VALUES (4, '{big}', 4)",
        "UPDATE d.j SET doc = '{\"a\": 2}' WHERE id = 1",
        "UPDATE d.j SET n = 20 WHERE id = 2",
        "DELETE FROM d.j WHERE id = 3",
    ]
    for statement in statements:
        events = replicate(statement)
        codes = [code for code, _, _ in events]
        assert ev.TABLE_MAP_EVENT in codes and ev.QUERY_EVENT not in codes[2:], (statement, codes)
        table_map = ev.TableMapEvent.decode_body(
            next(body for code, body, _ in events if code == ev.TABLE_MAP_EVENT)
        )
        assert [c.type_code for c in table_map.columns] == [3, 245, 3]
        assert _docs(replica) == _docs(source), statement
    assert _docs(replica)[:2] == [
        (1, '{"a": 2}', 1),
        (2, '[1.0, "héllo", {"ü": -70000}]', 20),
    ]
    assert _docs(replica)[2][1] == json_text.normalize(big)
    assert len(jb.encode_text(big)) > 65535
    # the rows' bytes are MySQL's binary JSON: python-mysql-replication reads the last insert
    run(source, "INSERT INTO d.j VALUES (5, '{\"k\": [1, 2]}', 5)")
    rows_body = next(body for code, body, _ in last_transaction(source) if code == 30)
    assert jb.encode_text('{"k": [1, 2]}') in rows_body


def test_bad_json_is_3140_and_nothing_is_logged(pair: tuple[Server, Server]) -> None:
    source, _ = pair
    run(source, JSON_TABLE)
    before = source.binlog.end
    with pytest.raises(Exception, match="3140"):
        run(source, "INSERT INTO d.j VALUES (1, '{oops', 1)")
    assert source.binlog.end == before
    assert _docs(source) == []
