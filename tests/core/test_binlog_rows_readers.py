"""Row events read by decoders no one here wrote: ``mariadb-binlog -v`` (MariaDB's C
reader, ``log_event_print_value``) and python-mysql-replication (PyPI
``mysql-replication``, the decoder CDC tools in Python use).

Each test writes a real binlog file (FORMAT_DESCRIPTION with MySQL 8.0's post-header
lengths, GTID, QUERY BEGIN, ROWS_QUERY, TABLE_MAP, rows events, XID) and checks that the
reader prints or returns exactly the values written, column by column, for every type of
the subset. python-mysql-replication reads from a server connection; its event parser
(``BinLogPacketWrapper``) is fed each event as the packet a server would send (an OK byte,
then the event), and the control connection it would query is a stub that fails the test
if used: with FULL metadata it needs no server.
"""

from __future__ import annotations

import datetime
import decimal
import re
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pymysql.protocol import MysqlPacket
from pymysqlreplication import event as pmr_event
from pymysqlreplication import row_event as pmr_rows
from pymysqlreplication.packet import BinLogPacketWrapper
from row_cases import EVERY_TYPE_ROWS, Value, every_type_table, tables
from test_binlog_mariadb import SID, TIMESTAMP, FileBuilder, query

from rpl.core.binlog import events as ev

Image = tuple[Value, ...]
_INT_SIZE = {
    ev.MYSQL_TYPE_TINY: 1,
    ev.MYSQL_TYPE_SHORT: 2,
    ev.MYSQL_TYPE_INT24: 3,
    ev.MYSQL_TYPE_LONG: 4,
    ev.MYSQL_TYPE_LONGLONG: 8,
}
_TEXT_TYPES = (ev.MYSQL_TYPE_STRING, ev.MYSQL_TYPE_VARCHAR, ev.MYSQL_TYPE_BLOB)


@pytest.fixture(scope="module")
def mariadb_binlog() -> str:
    tool = shutil.which("mariadb-binlog")
    if tool is None:
        pytest.fail("mariadb-binlog is not installed (apt-get install mariadb-client)")
    return tool


def transaction_file(path: Path, events: Sequence[ev.Event]) -> Path:
    """A binlog file of one transaction holding ``events`` (TABLE_MAPs and rows events),
    with a ROWS_QUERY before them, as MySQL writes it with binlog_rows_query_log_events.
    """
    builder = FileBuilder()
    rest: list[ev.Event] = [
        query("BEGIN"),
        ev.RowsQueryEvent("INSERT INTO t1 VALUES (...)"),
        *events,
        ev.XidEvent(9),
    ]
    length = sum(len(ev.encode_event(e, server_id=0, timestamp=0)) for e in rest)
    builder.add(
        ev.GtidEvent(
            SID, 1, sequence_number=1, immediate_commit_timestamp=TIMESTAMP * 1_000_000
        ).with_transaction_length(length, checksum=True)
    )
    for event in rest:
        ignorable = isinstance(event, ev.RowsQueryEvent)
        builder.add(event, flags=ev.LOG_EVENT_IGNORABLE_F if ignorable else 0)
    builder.close(ev.StopEvent())
    path.write_bytes(builder.data)
    return path


def statements(table_map: ev.TableMapEvent, rows: Sequence[Image]) -> list[ev.Event]:
    """A WRITE of ``rows``, an UPDATE of each row to the next (FULL images), an UPDATE
    with MINIMAL images (key -> the other columns) and a DELETE of them: each statement
    a TABLE_MAP and its rows event.
    """
    pairs = list(zip(rows, [*rows[1:], rows[0]], strict=True))
    width = len(table_map.columns)
    key_only = [True] + [False] * (width - 1)
    changed = [False] + [True] * (width - 1) if width > 1 else [True]
    minimal = [(row[:1], new[1:] if width > 1 else new) for row, new in pairs]
    return [
        table_map,
        ev.WriteRowsEvent.of(table_map, rows),
        table_map,
        ev.UpdateRowsEvent.of_updates(table_map, pairs),
        table_map,
        ev.UpdateRowsEvent.of_updates(table_map, minimal, columns=key_only, columns_after=changed),
        table_map,
        ev.DeleteRowsEvent.of(table_map, rows),
    ]


def written_images(
    table_map: ev.TableMapEvent, events: Sequence[ev.Event]
) -> list[dict[int, Value]]:
    """Every image of the rows events in ``events``: column number (1-based) -> value."""
    out: list[dict[int, Value]] = []
    for event in events:
        if isinstance(event, ev.RowsEvent):
            shapes = (
                [event.columns]
                if event.columns_after is None
                else [event.columns, event.columns_after]
            )
            for n, image in enumerate(event.images(table_map)):
                present = [i for i, bit in enumerate(shapes[n % len(shapes)]) if bit]
                out.append({i + 1: value for i, value in zip(present, image, strict=True)})
    return out


# --- mariadb-binlog -----------------------------------------------------------------


def _quoted(data: bytes) -> bytes:
    """``my_b_write_quoted``: bytes below 0x20 as \\xNN, the rest as they are."""
    return b"'" + b"".join(b"\\x%02x" % b if b < 0x20 else bytes((b,)) for b in data) + b"'"


def mariadb_text(column: ev.BinlogColumn, value: Value) -> bytes:
    """How ``mariadb-binlog -v`` prints ``value`` of ``column`` (its
    ``log_event_print_value``; it reads no signedness, so negative integers come with
    their unsigned reading in parentheses, and ENUM/SET/BIT print as numbers/bits).
    """
    if value is None:
        return b"NULL"
    code = column.real_type
    if code in _INT_SIZE:
        assert isinstance(value, int)
        bits = 8 * _INT_SIZE[code]
        signed = value - (1 << bits) if value >= 1 << (bits - 1) else value
        return (f"{signed} ({signed + (1 << bits)})" if signed < 0 else str(signed)).encode()
    if code in _TEXT_TYPES:
        return _quoted(value.encode() if isinstance(value, str) else bytes(value))  # type: ignore[arg-type]
    return _mariadb_other(column, code, value).encode()


def _mariadb_other(column: ev.BinlogColumn, code: int, value: Value) -> str:
    if code == ev.MYSQL_TYPE_FLOAT:
        assert isinstance(value, float)
        return f"{value:g}"  # C's "%-20g", padding stripped
    if code == ev.MYSQL_TYPE_DOUBLE:
        assert isinstance(value, float)
        return f"{value:.20g}"
    if code == ev.MYSQL_TYPE_NEWDECIMAL:
        assert isinstance(value, decimal.Decimal)
        return f"{value:f}"
    if code == ev.MYSQL_TYPE_DATE:
        return "'" + str(value).replace("-", ":") + "'"
    if code in (ev.MYSQL_TYPE_DATETIME2, ev.MYSQL_TYPE_TIME2):
        return f"'{value!s}'"
    if code == ev.MYSQL_TYPE_TIMESTAMP2:
        text = str(value)
        moment = datetime.datetime.strptime(text[:19], "%Y-%m-%d %H:%M:%S")
        seconds = int(moment.replace(tzinfo=datetime.UTC).timestamp())
        return f"{seconds}{text[19:]}"
    if code == ev.MYSQL_TYPE_YEAR:
        return str(value or 1900)  # it prints byte + 1900, the zero year's 0 too
    if code == ev.MYSQL_TYPE_ENUM:
        return str(0 if value == "" else column.members.index(str(value)) + 1)
    if code == ev.MYSQL_TYPE_SET:
        # the bitmap's bytes are little-endian; it prints them as bits, first byte first
        size = column.metadata[1]
        bits = sum(1 << column.members.index(m) for m in str(value).split(",") if m)
        shown = int.from_bytes(bits.to_bytes(size, "little"), "big")
        return f"b'{shown:0{8 * size}b}'"
    assert code == ev.MYSQL_TYPE_BIT and isinstance(value, int)
    return f"b'{value:0{8 * column.metadata[1] + column.metadata[0]}b}'"


_ROW_LINE = re.compile(rb"###   @(\d+)=(.*)")


def mariadb_images(tool: str, path: Path) -> list[dict[int, bytes]]:
    """The images ``mariadb-binlog -v --base64-output=decode-rows`` prints: for each
    INSERT's SET, UPDATE's WHERE and SET, DELETE's WHERE, column number -> its text.
    """
    done = subprocess.run(
        [tool, "-v", "--base64-output=decode-rows", str(path)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert b"ERROR" not in done.stderr, done.stderr
    images: list[dict[int, bytes]] = []
    for line in done.stdout.split(b"\n"):
        if line in (b"### SET", b"### WHERE"):
            images.append({})
        elif match := _ROW_LINE.fullmatch(line):
            images[-1][int(match[1])] = match[2].rstrip(b" ")
    return images


def expected_mariadb(
    table_map: ev.TableMapEvent, images: list[dict[int, Value]]
) -> list[dict[int, bytes]]:
    return [
        {n: mariadb_text(table_map.columns[n - 1], v) for n, v in image.items()} for image in images
    ]


def test_mariadb_binlog_prints_every_type_as_written(tmp_path: Path, mariadb_binlog: str) -> None:
    table_map = every_type_table("MINIMAL")
    events = statements(table_map, EVERY_TYPE_ROWS)
    path = transaction_file(tmp_path / "binlog.000001", events)
    images = written_images(every_type_table("FULL"), events)
    assert len(images) == 3 + 6 + 6 + 3
    printed = mariadb_images(mariadb_binlog, path)
    assert printed == expected_mariadb(every_type_table("FULL"), images)
    assert printed[0][1] == b"1" and printed[0][2] == b"-128 (128)"  # the sample in docs


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.data())
def test_mariadb_binlog_prints_random_tables_as_written(
    tmp_path: Path, mariadb_binlog: str, data: st.DataObject
) -> None:
    table_map, strategies = data.draw(tables(max_columns=12))
    rows = data.draw(st.lists(st.tuples(*strategies), min_size=1, max_size=4))
    events = statements(table_map, rows)
    path = transaction_file(tmp_path / "binlog.000001", events)
    images = written_images(table_map, events)
    assert mariadb_images(mariadb_binlog, path) == expected_mariadb(table_map, images)


# --- python-mysql-replication -------------------------------------------------------


class _NoServer:
    """The control connection python-mysql-replication would query: it may ask only
    which server kind it reads (FULL metadata gives it everything else).
    """

    charset = "utf8mb4"

    def _get_dbms(self) -> str:
        return "mysql"

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"python-mysql-replication asked the server for {name}")


_PMR_EVENTS = frozenset(
    (
        pmr_event.FormatDescriptionEvent,
        pmr_event.GtidEvent,
        pmr_event.QueryEvent,
        pmr_event.RowsQueryLogEvent,
        pmr_event.XidEvent,
        pmr_event.StopEvent,
        pmr_rows.TableMapEvent,
        pmr_rows.WriteRowsEvent,
        pmr_rows.UpdateRowsEvent,
        pmr_rows.DeleteRowsEvent,
    )
)


def pmr_events(path: Path) -> Iterator[object]:
    """Each event of the file at ``path`` as python-mysql-replication parses it."""
    data = path.read_bytes()
    table_map: dict[int, object] = {}
    pos = len(ev.BINLOG_MAGIC)
    while pos < len(data):
        size = ev.EventHeader.unpack(data, pos).event_size
        packet = MysqlPacket(b"\0" + data[pos : pos + size], "utf8")
        pos += size
        wrapper = BinLogPacketWrapper(
            packet,
            table_map,
            _NoServer(),
            (8, 0, 36),
            True,
            _PMR_EVENTS,
            None,
            None,
            None,
            None,
            False,
            False,
            True,
            True,
            False,
        )
        if isinstance(wrapper.event, pmr_rows.TableMapEvent):
            table_map[wrapper.event.table_id] = wrapper.event.get_table()
        yield wrapper.event


def pmr_value(column: ev.BinlogColumn, value: Value) -> object:
    """``value`` as python-mysql-replication returns it: dates, times and sets as Python
    objects, BIT as a string of bits; and its readings of empty values: b"" as "", the
    empty SET as None, the zero YEAR (byte 0) as 1900 (mariadb-binlog prints 1900 too).
    """
    code = column.real_type
    if value == b"":
        return ""
    if code == ev.MYSQL_TYPE_YEAR and value == 0:
        return 1900
    if code == ev.MYSQL_TYPE_SET and value == "":
        return None
    if (
        value is None
        or code in _INT_SIZE
        or code in _TEXT_TYPES
        or code
        in (
            ev.MYSQL_TYPE_FLOAT,
            ev.MYSQL_TYPE_DOUBLE,
            ev.MYSQL_TYPE_NEWDECIMAL,
            ev.MYSQL_TYPE_YEAR,
            ev.MYSQL_TYPE_ENUM,
        )
    ):
        return value
    text = str(value)
    if code == ev.MYSQL_TYPE_DATE:
        return datetime.date.fromisoformat(text)
    if code in (ev.MYSQL_TYPE_DATETIME2, ev.MYSQL_TYPE_TIMESTAMP2):
        return datetime.datetime.fromisoformat(text)
    if code == ev.MYSQL_TYPE_TIME2:
        sign, rest = (-1, text[1:]) if text.startswith("-") else (1, text)
        hours, minutes, seconds = rest.split(":")
        return sign * datetime.timedelta(
            hours=int(hours), minutes=int(minutes), seconds=float(seconds)
        )
    if code == ev.MYSQL_TYPE_SET:
        return set(filter(None, text.split(",")))
    assert code == ev.MYSQL_TYPE_BIT and isinstance(value, int)
    return f"{value:0{8 * column.metadata[1] + column.metadata[0]}b}"


def _pmr_quirk(column: ev.BinlogColumn, value: Value) -> bool:
    """A negative TIME with a fraction: python-mysql-replication adds the fraction to
    the negative whole seconds (MariaDB and MySQL read it as written; the bytes are
    ``my_time_packed_to_binary``'s, see test_value_bytes).
    """
    text = str(value)
    return (
        column.real_type == ev.MYSQL_TYPE_TIME2
        and text.startswith("-")
        and text.partition(".")[2].strip("0") != ""
    )


def test_python_mysql_replication_reads_every_type_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "UTC")  # it reads TIMESTAMP in the local time zone
    time.tzset()
    table_map = every_type_table("FULL")
    events = statements(table_map, EVERY_TYPE_ROWS)
    path = transaction_file(tmp_path / "binlog.000001", events)
    names = [c.name or "" for c in table_map.columns]
    read: list[dict[str, object]] = []
    kinds = []
    for event in pmr_events(path):
        kinds.append(type(event).__name__)
        if isinstance(event, pmr_rows.TableMapEvent):
            assert (event.schema, event.table) == ("db1", "t1")
            assert [c.name for c in event.columns] == names
        if isinstance(event, pmr_rows.UpdateRowsEvent):
            for row in event.rows:
                read += [row["before_values"], row["after_values"]]
        elif isinstance(event, pmr_rows.RowsEvent):
            read += [row["values"] for row in event.rows]
    assert kinds[:4] == [
        "FormatDescriptionEvent",
        "GtidEvent",
        "QueryEvent",
        "RowsQueryLogEvent",
    ] and kinds[-2:] == ["XidEvent", "StopEvent"]
    written = written_images(table_map, events)
    assert len(read) == len(written)
    quirks, wrong = 0, []
    for got, image in zip(read, written, strict=True):
        for n, value in image.items():
            column = table_map.columns[n - 1]
            if _pmr_quirk(column, value):
                quirks += 1
            elif got[names[n - 1]] != pmr_value(column, value):
                wrong.append((names[n - 1], value, got[names[n - 1]]))
    assert wrong == [], "\n".join(map(repr, wrong))
    assert quirks  # the rows hold negative fractional times: the skip is deliberate
