"""``rpl validate`` on logs of binlog_format=ROW (GTID, BEGIN, TABLE_MAP, WRITE_ROWS, XID;
written with the codec by :func:`rpl.core.testing.binlogs.write_topology`): a clean run
is proven clean by the sketches and row by row; a rows event altered in the relay log
(CRC32 redone, so the event is intact but not the source's) and one with a byte flipped
(CRC32 left as it was) are found on both paths; histories are read from the rows events,
giving exactly what the equivalent statements give."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import SPLIT_BYTES
from faults import events, find, rewrite

from rpl.core.binlog import events as ev
from rpl.core.binlog.gtid import GtidSet
from rpl.core.binlog.logfile import LogEntry
from rpl.core.binlog.writer import file_header
from rpl.core.engine.schema import ColumnSchema
from rpl.core.testing.binlogs import write_topology
from rpl.core.validate.checks import validate
from rpl.core.validate.findings import Finding
from rpl.core.validate.layout import discover_all, plan_splits
from rpl.core.validate.report import Report
from rpl.core.validate.scan import scan_all

Check = Callable[..., Report]
TRANSACTIONS = 60
PATHS = pytest.mark.parametrize("exact", [False, True], ids=["sketches", "exact"])
"""Each path in a test of its own: one validation per test."""


@pytest.fixture
def rows_run(tmp_path: Path) -> Path:
    """A source and a replica whose logs hold row transactions, rotated by size."""
    write_topology(tmp_path, TRANSACTIONS, max_file_bytes=4 << 10, rows=True)
    return tmp_path


@pytest.fixture
def check(spark: Any, rows_run: Path) -> Check:
    def go(*nodes: str, **options: Any) -> Report:
        names = nodes or ("source", "replica")
        return validate(
            [str(rows_run / n) for n in names], spark=spark, split_bytes=SPLIT_BYTES, **options
        )

    return go


def _write_rows(entry: LogEntry) -> bool:
    return isinstance(entry.event, ev.WriteRowsEvent)


def _group(path: Path, target: LogEntry) -> list[LogEntry]:
    """The events of the transaction ``target`` is in, from its GTID event."""
    entries = events(path, relay=True)
    at = next(i for i, e in enumerate(entries) if e.position == target.position)
    start = max(i for i in range(at + 1) if isinstance(entries[i].event, ev.GtidEvent))
    end = next(i for i in range(at, len(entries)) if isinstance(entries[i].event, ev.XidEvent))
    return entries[start : end + 1]


def _found(report: Report, check: str) -> list[Finding]:
    found = [f for f in report.violations if f.check == check]
    assert found, f"no {check} violation in:\n{report.summary()}"
    return found


@PATHS
def test_a_row_format_run_validates_clean(check: Check, rows_run: Path, exact: bool) -> None:
    report = check(exact=exact)
    assert report.violations == [], report.summary()
    assert report.method == ("exact" if exact else "sketches"), report.unproven
    assert report.logs["source"]["binlog"].files > 2
    assert report.logs["source"]["binlog"].transactions == TRANSACTIONS
    assert report.logs["replica"]["relay"].transactions == TRANSACTIONS
    assert report.logs["replica"]["binlog"].transactions == TRANSACTIONS
    assert report.events == sum(
        len(events(p, "relay" in p.name))
        for n in ("source", "replica")
        for p in rows_run.glob(f"{n}/*.0*")
    )


@PATHS
def test_a_rows_event_that_differs_from_the_source(
    check: Check, rows_run: Path, exact: bool
) -> None:
    """One digit of a row's value changed in the relay log's copy, its CRC32 redone: the
    event is intact, but not the source's. The sketches do not prove the run clean, and
    the exact path names the event."""
    path = rows_run / "replica" / "relay-bin.000001"
    target = find(path, _write_rows, relay=True, nth=5)
    group = _group(path, target)

    def alter(data: bytearray) -> None:
        last_digit = target.end - ev.CHECKSUM_LEN - 1
        data[last_digit] = ord("7") if data[last_digit] != ord("7") else ord("8")
        ev.set_log_pos(data, target.position, target.header.log_pos, True)

    rewrite(path, alter)
    assert isinstance(find(path, _write_rows, relay=True, nth=5).event, ev.WriteRowsEvent)
    report = check(exact=exact)
    differs = _found(report, "relay_vs_source")
    assert [(f.node, f.file, f.position) for f in differs] == [
        ("replica", "relay-bin.000001", group[0].position)
    ], report.summary()
    assert f"event {group.index(target) + 1} of the transaction differs" in differs[0].detail
    assert differs[0].gtid == str(group[0].event.gtid)  # type: ignore[attr-defined]
    assert report.method == "exact"
    if not exact:
        assert "differ from the source's" in report.unproven


@PATHS
def test_a_flipped_byte_in_a_rows_event(check: Check, rows_run: Path, exact: bool) -> None:
    path = rows_run / "source" / "binlog.000001"
    target = find(path, _write_rows, nth=7)
    rewrite(
        path,
        lambda data: data.__setitem__(target.position + 30, data[target.position + 30] ^ 0x08),
    )
    report = check("source", exact=exact)
    structure = _found(report, "structure")
    assert [(f.node, f.file, f.position) for f in structure] == [
        ("source", "binlog.000001", target.position)
    ], report.summary()
    assert "CRC32 mismatch in an event of type 30" in structure[0].detail
    assert report.method == "exact" and report.exit_code == 1
    if not exact:
        assert report.unproven


def _history(path: Path, records: list[dict[str, object]]) -> str:
    base = {"start": 1.0, "end": 1.1, "outcome": "ok", "table": "d.t"}
    path.write_text("".join(json.dumps({**base, **r}) + "\n" for r in records))
    return str(path)


def test_a_history_checked_against_rows_events(check: Check, rows_run: Path) -> None:
    history = _history(
        rows_run / "history.jsonl",
        [
            {"client": "w1", "op": "write", "key": 5, "value": "v0000000005"},
            {"client": "w1", "op": "write", "key": 59, "value": "v0000000059"},
            {"client": "w2", "op": "write", "key": 9999, "value": "lost"},
            {"client": "r1", "op": "read", "key": 6, "value": "v0000000006"},
            {"client": "r1", "op": "read", "key": 6, "value": "never"},
        ],
    )
    report = check(history=history, expect_on="replica")
    found = sorted((f.position, f.node) for f in _found(report, "history"))
    assert found == [(3, "replica"), (5, "replica")], report.summary()


# -- the same writes from statements and from rows ----------------------------------------

SID = uuid.UUID("3e11fa47-71ca-11e1-9e33-c80aa9429562")
TABLE = ev.TableMapEvent(
    77,
    "d",
    "t",
    (
        ev.binlog_column(ColumnSchema("id", "INT", nullable=False)),
        ev.binlog_column(ColumnSchema("v", "VARCHAR", 40)),
    ),
)


def _binlog(directory: Path, transactions: list[list[ev.Event]]) -> None:
    """A node's binlog.000001 holding ``transactions`` (each after its GTID event)."""
    directory.mkdir()
    data = bytearray(file_header(1, True, GtidSet(), True))
    for gno, body in enumerate(transactions, 1):
        for event in [ev.GtidEvent(SID, gno), *body]:
            at = len(data)
            data += ev.encode_event(event, server_id=1, timestamp=1_700_000_000)
            ev.set_log_pos(data, at, len(data), True)
    (directory / "binlog.000001").write_bytes(bytes(data))
    (directory / "binlog.index").write_text("./binlog.000001\n")
    (directory / "auto.cnf").write_text(f"[auto]\nserver-uuid={SID}\n")


def _query(sql: str) -> ev.QueryEvent:
    return ev.QueryEvent(1, 0, 0, ev.default_status_vars(), "d", sql)


def _writes(directory: Path) -> list[tuple[str, str, str, str]]:
    nodes = discover_all([str(directory)])
    return [w for r in scan_all(plan_splits(nodes, 1 << 20), extract_writes=True) for w in r.writes]


def test_statements_and_rows_give_the_same_writes(tmp_path: Path) -> None:
    begin, xid = _query("BEGIN"), ev.XidEvent(1)
    statements = [
        [begin, _query("INSERT INTO d.t VALUES (1, 'a'), (2, 'b')"), xid],
        [begin, _query("UPDATE t SET v = 'changed' WHERE id = 1"), xid],
        [begin, _query("INSERT INTO t VALUES (3, 'x')"), _query("DELETE FROM t WHERE id = 2"), xid],
        [begin, _query("REPLACE INTO d.t VALUES (3, 'héllo')"), xid],
    ]
    minimal_after = (False, True)
    rows: list[list[ev.Event]] = [
        [begin, TABLE, ev.WriteRowsEvent.of(TABLE, [(1, "a"), (2, "b")]), xid],
        [
            begin,
            ev.RowsQueryEvent("UPDATE t SET v = 'changed' WHERE id = 1"),
            TABLE,
            ev.UpdateRowsEvent.of_updates(
                TABLE, [((1, "a"), ("changed",))], columns_after=minimal_after
            ),
            xid,
        ],
        [
            begin,
            TABLE,
            ev.WriteRowsEvent.of(TABLE, [(3, "x")]),
            TABLE,
            ev.DeleteRowsEvent.of(TABLE, [(2, "b")]),
            xid,
        ],
        [begin, TABLE, ev.UpdateRowsEvent.of_updates(TABLE, [((3, "x"), (3, "héllo"))]), xid],
    ]
    _binlog(tmp_path / "statements", statements)
    _binlog(tmp_path / "rows", rows)
    by_statements = _writes(tmp_path / "statements")
    assert by_statements == [
        (f"{SID}:1", "d.t", "1", "a"),
        (f"{SID}:1", "d.t", "2", "b"),
        (f"{SID}:2", "d.t", "1", "changed"),
        (f"{SID}:3", "d.t", "3", "x"),
        (f"{SID}:4", "d.t", "3", "héllo"),
    ]
    assert _writes(tmp_path / "rows") == by_statements


def test_the_synthetic_runs_write_the_same_in_both_formats(tmp_path: Path) -> None:
    write_topology(tmp_path / "statements", 40)
    write_topology(tmp_path / "rows", 40, rows=True, rows_query=True)
    by_statements = _writes(tmp_path / "statements" / "source")
    assert len(by_statements) == 40
    assert _writes(tmp_path / "rows" / "source") == by_statements
