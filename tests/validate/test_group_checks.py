"""``rpl validate --fresh-reads`` and ``--group`` on Spark (local[2]), against the recorded
run (the source's UUID stands in for a group's: its GTIDs are in one order on both nodes):
stale reads are found and fresh ones are not; a reordered, duplicated or missing group
GTID is found with its node."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from faults import rewrite, swap
from test_validate import _transactions

from rpl.core.binlog.events import relocate_events
from rpl.core.validate.findings import Finding
from rpl.core.validate.report import Report

Check = Callable[..., Report]


def _history(path: Path, records: list[dict[str, object]]) -> str:
    base = {"outcome": "ok", "table": "d.t"}
    path.write_text("".join(json.dumps({**base, **r}) + "\n" for r in records))
    return str(path)


def _found(report: Report, check: str) -> list[Finding]:
    return [f for f in report.violations if f.check == check]


def _source_uuid(run: Path) -> str:
    text = (run / "source" / "auto.cnf").read_text()
    return text.split("server-uuid=", 1)[1].split()[0].strip()


def test_stale_reads_are_found_and_fresh_ones_are_not(check: Check, run: Path) -> None:
    """Key 7 was written 'v7', then 'changed' (a later GTID); key 5 'v5'."""
    ops: list[dict[str, object]] = [
        {"client": "w1", "op": "write", "key": 7, "value": "v7", "start": 0.5, "end": 1.0},
        {"client": "w2", "op": "write", "key": 7, "value": "changed", "start": 1.9, "end": 2.0},
        {"client": "w3", "op": "write", "key": 5, "value": "v5", "start": 0.5, "end": 1.0},
        # stale: 'changed' was acknowledged before these began
        {"client": "r1", "op": "read", "key": 7, "value": "v7", "start": 3.0, "end": 3.1},
        {"client": "r2", "op": "read", "key": 5, "value": None, "start": 3.0, "end": 3.1},
        # fresh: the newest acknowledged value, or begun before the newer write's OK
        {"client": "r3", "op": "read", "key": 7, "value": "changed", "start": 3.0, "end": 3.1},
        {"client": "r4", "op": "read", "key": 7, "value": "v7", "start": 1.5, "end": 2.5},
        {"client": "r5", "op": "read", "key": 998, "value": None, "start": 3.0, "end": 3.1},
        {"client": "r6", "op": "read", "key": 5, "value": "v5", "start": 3.0, "end": 3.1},
    ]
    history = _history(run / "history.jsonl", ops)
    report = check(history=history, fresh_reads=True)
    stale = _found(report, "fresh_reads")
    assert [f.position for f in stale] == [4, 5], report.summary()
    assert "r1 read d.t key 7 and got 'v7', but w2 had OK for 'changed'" in stale[0].detail
    assert "got no row" in stale[1].detail
    assert "fresh_reads" in report.checks and report.stale_reads == 2
    assert report.stale_reads_by_table == {"d.t": 2}
    assert "2 stale reads" in report.summary()
    # the same history without --fresh-reads: EVENTUAL allows them
    assert _found(check(history=history), "fresh_reads") == []


def test_the_group_order_holds_on_a_clean_run(check: Check, run: Path) -> None:
    report = check(group=_source_uuid(run))
    assert "group_order" in report.checks and report.method == "exact"
    assert report.violations == [], report.summary()


def test_a_reordered_group_gtid_is_found(check: Check, run: Path) -> None:
    path = run / "replica" / "binlog.000001"
    groups = _transactions(path)
    first, second = groups[-3], groups[-2]
    swap(path, first, second)
    report = check(group=_source_uuid(run))
    order = _found(report, "group_order")
    moved = str(first[0].event.gtid)  # type: ignore[attr-defined]
    assert [(f.node, f.gtid) for f in order] == [("replica", moved)], report.summary()
    assert "not the group's order" in order[0].detail


def test_a_missing_group_gtid_is_found(check: Check, run: Path) -> None:
    path = run / "replica" / "binlog.000001"
    groups = _transactions(path)
    gone = groups[-3]
    start, end = gone[0].position, gone[-1].end

    def cut(data: bytearray) -> None:
        rest = bytearray(data[end:])
        relocate_events(rest, start, checksum=True)
        data[start:] = rest

    rewrite(path, cut)
    report = check(group=_source_uuid(run))
    missing = [f for f in _found(report, "group_order") if "missing" in f.detail]
    lost = str(gone[0].event.gtid)  # type: ignore[attr-defined]
    assert [(f.node, f.gtid) for f in missing] == [("replica", lost)], report.summary()
