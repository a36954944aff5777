"""Binlog file names, the index file, and reading (damaged) binlog files back."""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rpl.core.binlog import events as ev
from rpl.core.binlog import logfile as lf
from rpl.core.binlog.gtid import GtidSet
from rpl.core.binlog.trim import truncate_tail
from rpl.core.engine.schema import ColumnSchema

SID = uuid.UUID("3e11fa47-71ca-11e1-9e33-c80aa9429562")


def build(
    events: Sequence[tuple[ev.Event, int]], *, checksum: bool = True, in_use: bool = True
) -> tuple[bytes, list[int]]:
    """A binlog file: magic, FD, then ``events`` (with header flags); and event offsets."""
    fd = ev.FormatDescriptionEvent(checksum_alg=1 if checksum else 0)
    data = bytearray(ev.BINLOG_MAGIC)
    offsets = []
    all_events = [(fd, ev.LOG_EVENT_BINLOG_IN_USE_F if in_use else 0), *events]
    for event, flags in all_events:
        raw = ev.encode_event(
            event, server_id=1, timestamp=1_700_000_000, flags=flags, checksum=checksum
        )
        offsets.append(len(data))
        data += raw
        ev.set_log_pos(data, offsets[-1], len(data), checksum)
    return bytes(data), offsets


def query(text: str) -> ev.QueryEvent:
    return ev.QueryEvent(
        thread_id=5,
        exec_time=0,
        error_code=0,
        status_vars=ev.default_status_vars(),
        db="test",
        query=text,
    )


def transaction(gno: int, statement: str, xid: int) -> list[tuple[ev.Event, int]]:
    rest = [query("BEGIN"), query(statement), ev.XidEvent(xid)]
    size = sum(len(ev.encode_event(e, server_id=1, timestamp=0)) for e in rest)
    gtid = ev.GtidEvent(SID, gno).with_transaction_length(size)
    return [(gtid, 0), *((e, ev.LOG_EVENT_SUPPRESS_USE_F if e == rest[0] else 0) for e in rest)]


def sample_events() -> list[tuple[ev.Event, int]]:
    return [
        (ev.PreviousGtidsEvent(GtidSet()), ev.LOG_EVENT_IGNORABLE_F),
        *transaction(1, "INSERT INTO t VALUES (1)", 10),
        *transaction(2, "INSERT INTO t VALUES (2)", 11),
        (ev.GtidEvent(SID, 3), 0),
        (query("CREATE TABLE u (i INT)"), 0),
        (ev.RotateEvent(4, "binlog.000002"), 0),
    ]


ROW_TABLE = ev.TableMapEvent(
    42,
    "test",
    "t",
    (
        ev.binlog_column(ColumnSchema("id", "INT", nullable=False)),
        ev.binlog_column(ColumnSchema("v", "VARCHAR", 20)),
    ),
)


def row_transaction(gno: int, xid: int) -> list[tuple[ev.Event, int]]:
    """A transaction as binlog_format=ROW logs it, with binlog_rows_query_log_events: GTID,
    BEGIN, then per statement ROWS_QUERY, TABLE_MAP and its rows events (STMT_END_F on
    the last), XID."""
    rest: list[tuple[ev.Event, int]] = [
        (query("BEGIN"), ev.LOG_EVENT_SUPPRESS_USE_F),
        (ev.RowsQueryEvent("INSERT INTO t VALUES (1, 'a'), (2, 'b')"), ev.LOG_EVENT_IGNORABLE_F),
        (ROW_TABLE, 0),
        (ev.WriteRowsEvent.of(ROW_TABLE, [(1, "a")], flags=0), 0),
        (ev.WriteRowsEvent.of(ROW_TABLE, [(2, "b")]), 0),
        (ev.RowsQueryEvent("UPDATE t SET v = 'c' WHERE id = 1"), ev.LOG_EVENT_IGNORABLE_F),
        (ROW_TABLE, 0),
        (ev.UpdateRowsEvent.of_updates(ROW_TABLE, [((1, "a"), (1, "c"))]), 0),
        (ROW_TABLE, 0),
        (ev.DeleteRowsEvent.of(ROW_TABLE, [(2, "b")]), 0),
        (ev.XidEvent(xid), 0),
    ]
    size = sum(len(ev.encode_event(e, server_id=1, timestamp=0)) for e, _ in rest)
    return [(ev.GtidEvent(SID, gno).with_transaction_length(size), 0), *rest]


def row_sample_events() -> list[tuple[ev.Event, int]]:
    """The sample with a row transaction between the statement ones and the DDL."""
    sample = sample_events()
    return [*sample[:9], *row_transaction(4, 12), *sample[9:]]


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# -- names ----------------------------------------------------------------------------------


def test_file_names() -> None:
    assert lf.binlog_file_name("binlog", 1) == "binlog.000001"
    assert lf.binlog_file_name("mysql-bin", 999999) == "mysql-bin.999999"
    assert lf.binlog_file_name("binlog", 1000000) == "binlog.1000000"
    assert lf.file_number("binlog.000042") == 42
    assert lf.file_number("./data/binlog.1000000") == 1000000
    assert lf.file_number("my.bin.000003") == 3
    for bad in ("binlog", "binlog.", "binlog.00a1", "binlog.index"):
        with pytest.raises(ValueError):
            lf.file_number(bad)
    for bad_number in (0, -1, 2**31):
        with pytest.raises(ValueError):
            lf.binlog_file_name("binlog", bad_number)


def test_names_sort_numerically() -> None:
    names = ["binlog.1000000", "binlog.999999", "binlog.000010", "binlog.000009"]
    assert lf.sorted_names(names) == [
        "binlog.000009",
        "binlog.000010",
        "binlog.999999",
        "binlog.1000000",
    ]
    assert sorted(names) != lf.sorted_names(names)  # a string sort would be wrong


@given(st.integers(1, 2**31 - 1))
def test_name_round_trip(number: int) -> None:
    assert lf.file_number(lf.binlog_file_name("b", number)) == number


# -- index ----------------------------------------------------------------------------------


def test_index_append_rewrite_and_reload(tmp_path: Path) -> None:
    index = lf.BinlogIndex(tmp_path / "binlog.index")
    assert index.names() == []
    index.append("binlog.000001")
    index.append("binlog.000002")
    assert (tmp_path / "binlog.index").read_text() == "./binlog.000001\n./binlog.000002\n"
    assert lf.BinlogIndex(str(tmp_path / "binlog.index")).load() == [
        "binlog.000001",
        "binlog.000002",
    ]
    assert index.paths() == [str(tmp_path / "binlog.000001"), str(tmp_path / "binlog.000002")]
    index.rewrite(["binlog.000002"])
    assert (tmp_path / "binlog.index").read_text() == "./binlog.000002\n"
    index.rewrite([])
    assert (tmp_path / "binlog.index").read_text() == ""
    assert not (tmp_path / "binlog.index.tmp").exists()


def test_index_reads_mysql_written_files(tmp_path: Path) -> None:
    (tmp_path / "b.index").write_text("./b.000001\n/var/lib/mysql/b.000002\n\nb.000003\n")
    assert lf.BinlogIndex(tmp_path / "b.index").names() == ["b.000001", "b.000002", "b.000003"]


def test_index_write_is_durable_via_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        calls.append("fsync")
        real_fsync(fd)

    def replace(source: str, target: str) -> None:
        calls.append("replace")
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    lf.BinlogIndex(tmp_path / "x.index").append("x.000001")
    assert calls == ["fsync", "replace", "fsync"]


# -- reading --------------------------------------------------------------------------------


@pytest.mark.parametrize("checksum", [True, False])
def test_read_events_yields_everything(tmp_path: Path, checksum: bool) -> None:
    events = sample_events()
    data, offsets = build(events, checksum=checksum)
    path = write(tmp_path / "binlog.000001", data)
    entries = list(lf.read_events(path))
    assert [e.position for e in entries] == offsets
    assert isinstance(entries[0].event, ev.FormatDescriptionEvent)
    assert [e.event for e in entries[1:]] == [event for event, _ in events]
    assert b"".join(e.raw for e in entries) == data[4:]
    assert entries[-1].end == len(data)
    assert entries[1].header.flags == ev.LOG_EVENT_IGNORABLE_F
    # FD 122 bytes (CRC even without checksums), PREVIOUS_GTIDS 31 (27 without)
    assert offsets[1] == 126 and offsets[2] == (157 if checksum else 153)


def test_read_events_from_a_position(tmp_path: Path) -> None:
    data, offsets = build(sample_events())
    path = write(tmp_path / "binlog.000001", data)
    entries = list(lf.read_events(path, offsets[3]))
    assert [e.position for e in entries] == offsets[3:]
    assert list(lf.read_events(path, len(data))) == []
    with pytest.raises(ValueError):
        list(lf.read_events(path, 2))
    with pytest.raises(ValueError, match="inside"):
        list(lf.read_events(path, 50))


def test_read_events_stop_at(tmp_path: Path) -> None:
    data, offsets = build(sample_events())
    path = write(tmp_path / "binlog.000001", data)
    assert [e.position for e in lf.read_events(path, stop_at=offsets[4])] == offsets[:4]
    with pytest.raises(lf.LogTruncated) as info:
        list(lf.read_events(path, stop_at=offsets[4] + 10))
    assert info.value.position == offsets[4]


def test_small_chunks_read_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data, offsets = build(sample_events() * 3)
    path = write(tmp_path / "binlog.000001", data)
    monkeypatch.setattr(lf, "READ_CHUNK", 7)
    assert [e.position for e in lf.read_events(path)] == offsets
    assert [e.position for e in lf.read_events(path, offsets[5])] == offsets[5:]


def test_large_file_is_read_in_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = [(query("INSERT INTO t VALUES ('" + "x" * 5000 + "')"), 0)] * 600  # ~3 MB
    data, offsets = build(big)
    path = write(tmp_path / "binlog.000001", data)
    reads: list[int] = []
    real_open = open

    class Counting:
        def __init__(self, f: object) -> None:
            self._f = f

        def read(self, n: int) -> bytes:
            reads.append(n)
            return self._f.read(n)  # type: ignore[attr-defined, no-any-return]

        def __getattr__(self, name: str) -> object:
            return getattr(self._f, name)

        def __enter__(self) -> Counting:
            return self

        def __exit__(self, *args: object) -> None:
            self._f.close()  # type: ignore[attr-defined]

    monkeypatch.setattr(lf, "open", lambda *a, **k: Counting(real_open(*a, **k)), raising=False)
    assert len(list(lf.read_events(path))) == len(offsets)
    assert len(reads) <= len(data) // lf.READ_CHUNK + 3


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=80)
@given(cut=st.integers(0, 10_000), checksum=st.booleans())
def test_truncated_file_raises_at_the_right_position(
    tmp_path: Path, cut: int, checksum: bool
) -> None:
    data, offsets = build(sample_events(), checksum=checksum)
    cut %= len(data)
    assume(cut not in offsets[1:])  # a cut at a later event boundary is just a shorter file
    path = write(tmp_path / "cut.000001", data[:cut])
    entries: list[lf.LogEntry] = []
    with pytest.raises(lf.LogTruncated) as info:
        for entry in lf.read_events(path):
            entries.append(entry)
    cut_event = 0 if cut < 4 else max(o for o in offsets if o <= cut)
    assert info.value.position == cut_event
    assert [e.position for e in entries] == [o for o in offsets if o < cut_event]
    assert str(path) in str(info.value)


def test_cut_at_an_event_boundary_is_a_shorter_file(tmp_path: Path) -> None:
    data, offsets = build(sample_events())
    for index in range(1, len(offsets)):
        path = write(tmp_path / "b.000001", data[: offsets[index]])
        assert [e.position for e in lf.read_events(path)] == offsets[:index]


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda d, o: d.__setitem__(o[3] + 40, d[o[3] + 40] ^ 1), "CRC"),
        (
            lambda d, o: d.__setitem__(slice(o[3] + 9, o[3] + 13), (5).to_bytes(4, "little")),
            "impossible event size",
        ),
        (
            lambda d, o: d.__setitem__(slice(o[3] + 9, o[3] + 13), (2**31).to_bytes(4, "little")),
            "impossible event size",
        ),
        (lambda d, o: ev.set_log_pos(d, o[3], 12345, True), "log_pos"),
        (lambda d, o: d.__setitem__(slice(0, 4), b"\xfebim"), "magic"),
        (lambda d, o: ev.set_log_pos(d, 4, 1, True), "log_pos"),
    ],
)
def test_corruption_is_reported(tmp_path: Path, mutate: object, reason: str) -> None:
    data, offsets = build(sample_events())
    damaged = bytearray(data)
    mutate(damaged, offsets)  # type: ignore[operator]
    path = write(tmp_path / "bad.000001", bytes(damaged))
    with pytest.raises(lf.LogCorrupt, match=reason) as info:
        list(lf.read_events(path))
    assert info.value.path == str(path)
    assert info.value.position in (0, 4, offsets[3])


def test_first_event_must_be_a_format_description(tmp_path: Path) -> None:
    raw = ev.encode_event(ev.StopEvent(), server_id=1, timestamp=0, log_pos=27)
    path = write(tmp_path / "x.000001", ev.BINLOG_MAGIC + raw)
    with pytest.raises(lf.LogCorrupt, match="FORMAT_DESCRIPTION") as info:
        list(lf.read_events(path))
    assert info.value.position == 4


def test_relay_log_positions_can_be_foreign(tmp_path: Path) -> None:
    data, offsets = build(sample_events())
    damaged = bytearray(data)
    ev.set_log_pos(damaged, offsets[3], 999_999, True)
    path = write(tmp_path / "relay.000001", bytes(damaged))
    entries = list(lf.read_events(path, check_log_pos=False))
    assert entries[3].header.log_pos == 999_999


# -- crash recovery scan --------------------------------------------------------------------


def test_scan_intact_file(tmp_path: Path) -> None:
    data, offsets = build(sample_events(), in_use=False)
    prefix = lf.scan_valid_prefix(write(tmp_path / "b.000001", data))
    assert prefix == lf.ValidPrefix(
        end=len(data),
        transaction_end=len(data),
        events=len(offsets),
        in_use=False,
        error=None,
        truncated=False,
    )


def test_scan_crashed_file_finds_the_last_transaction_boundary(tmp_path: Path) -> None:
    events = sample_events()[:-3]  # PREV, trx 1 (4 events), trx 2 (4 events)
    data, offsets = build(events)
    # Cut inside trx 2's XID: the intact prefix ends after its INSERT, the safe cut after trx 1.
    path = write(tmp_path / "b.000001", data[:-3])
    prefix = lf.scan_valid_prefix(path)
    assert prefix.end == offsets[-1]
    assert prefix.transaction_end == offsets[6]
    assert prefix.truncated and prefix.in_use
    assert prefix.error is not None and "b.000001" in prefix.error
    assert prefix.events == len(offsets) - 1
    # Whole events only, but trx 2 lacks its XID: the safe cut is still after trx 1.
    prefix = lf.scan_valid_prefix(write(path, data[: offsets[-1]]))
    assert (prefix.end, prefix.transaction_end, prefix.error) == (offsets[-1], offsets[6], None)


def test_scan_ddl_and_corruption(tmp_path: Path) -> None:
    data, offsets = build(sample_events())
    damaged = bytearray(data)
    damaged[offsets[-1] + 25] ^= 0xFF  # the ROTATE after the DDL
    prefix = lf.scan_valid_prefix(write(tmp_path / "b.000001", bytes(damaged)))
    assert prefix.end == prefix.transaction_end == offsets[-1]  # the DDL ends a group
    assert not prefix.truncated and "CRC" in (prefix.error or "")


@pytest.mark.parametrize(
    ("content", "end"),
    [(b"", 0), (b"\xfeb", 0), (b"\xfebin", 4), (b"\xfebin" + bytes(30), 4), (b"garbage!", 0)],
)
def test_scan_files_without_events(tmp_path: Path, content: bytes, end: int) -> None:
    prefix = lf.scan_valid_prefix(write(tmp_path / "b.000001", content))
    assert prefix.end == prefix.transaction_end == end
    assert prefix.events == 0 and prefix.error is not None


def _decoded_scan(
    path: Path, wanted: frozenset[int]
) -> tuple[lf.ValidPrefix, list[tuple[bytes, bool]]]:
    """The recovery scan done the slow way, as a reference: every event decoded by
    read_events, every one fed to the tracker."""
    end = transaction_end = events = 0
    in_use, tracker = False, lf.TransactionTracker()
    seen: list[tuple[bytes, bool]] = []
    try:
        for entry in lf.read_events(path, check_log_pos=False):
            if events == 0:
                in_use = bool(entry.header.flags & ev.LOG_EVENT_BINLOG_IN_USE_F)
            events, end = events + 1, entry.end
            ends = tracker.ends_group(entry.header, entry.event)
            transaction_end = end if ends else transaction_end
            if ends or entry.header.type_code in wanted:
                seen.append((entry.raw, ends))
    except lf.LogError as exc:
        if exc.position >= 4 and end == 0:
            end = transaction_end = 4
        return lf.ValidPrefix(
            end, transaction_end, events, in_use, "x", isinstance(exc, lf.LogTruncated)
        ), seen
    return lf.ValidPrefix(end, transaction_end, events, in_use, None, False), seen


@pytest.mark.parametrize("rows", [False, True], ids=["statements", "rows"])
@pytest.mark.parametrize("checksum", [True, False], ids=["crc32", "none"])
def test_fast_scan_agrees_with_decoding_every_event(
    tmp_path: Path, checksum: bool, rows: bool
) -> None:
    """At every cut and every flipped byte of a file, the scan (which decodes no event in
    a file with checksums) finds the same intact prefix, the same safe cut and visits the
    same events as decoding every event does."""
    data, _ = build(row_sample_events() if rows else sample_events(), checksum=checksum)
    wanted = frozenset((ev.GTID_LOG_EVENT, ev.ROTATE_EVENT))
    variants = [data[:cut] for cut in range(len(data) + 1)]
    variants += [data[:i] + bytes([data[i] ^ 0x20]) + data[i + 1 :] for i in range(len(data))]
    path = tmp_path / "b.000001"
    seen: list[tuple[bytes, bool]] = []

    def visit(raw: bytes, ends: bool) -> None:
        seen.append((raw, ends))

    for variant in variants:
        write(path, variant)
        seen.clear()
        prefix = lf.scan_valid_prefix(path, check_log_pos=False, visit=visit, wanted=wanted)
        expected, expected_seen = _decoded_scan(path, wanted)
        got = (prefix.end, prefix.transaction_end, prefix.events, prefix.truncated)
        assert got == (
            expected.end,
            expected.transaction_end,
            expected.events,
            expected.truncated,
        ), variant
        assert (prefix.error is None) == (expected.error is None)
        if checksum or expected.error is None:
            assert seen == expected_seen


def test_rows_events_never_end_a_transaction() -> None:
    tracker = lf.TransactionTracker()
    assert not tracker.feed(ev.GTID_LOG_EVENT)
    assert not tracker.feed(ev.QUERY_EVENT, "BEGIN")
    for code in (
        ev.ROWS_QUERY_LOG_EVENT,
        ev.TABLE_MAP_EVENT,
        ev.WRITE_ROWS_EVENT,
        ev.UPDATE_ROWS_EVENT,
        ev.DELETE_ROWS_EVENT,
    ):
        assert not tracker.feed(code), code
        assert tracker.state == "inside"
    assert tracker.feed(ev.XID_EVENT)


@pytest.mark.parametrize("checksum", [True, False], ids=["crc32", "none"])
def test_a_row_transaction_cut_at_any_event_boundary_goes_whole(
    tmp_path: Path, checksum: bool
) -> None:
    """A binlog cut at every event boundary inside a row transaction: the scan's safe cut
    is the end of the transaction before it, and crash recovery's truncation cuts the
    file there; cut after its XID, the file is kept whole."""
    before = sample_events()[:9]  # PREVIOUS_GTIDS and two statement transactions
    data, offsets = build([*before, *row_transaction(4, 12)], checksum=checksum)
    start = offsets[len(before) + 1]  # the row transaction's GTID event
    inside = [o for o in offsets if o > start]
    assert len(inside) == 11  # BEGIN, 2 ROWS_QUERY, 3 TABLE_MAP, 4 rows events, XID
    path = tmp_path / "binlog.000001"
    for cut in [start, *inside]:
        write(path, data[:cut])
        prefix = lf.scan_valid_prefix(path)
        assert prefix.error is None and prefix.end == cut
        assert prefix.transaction_end == start, cut
        truncate_tail(path)
        assert path.stat().st_size == start, cut
    write(path, data)
    prefix = lf.scan_valid_prefix(path)
    assert prefix.end == prefix.transaction_end == len(data)
    truncate_tail(path)
    assert path.read_bytes() == data
