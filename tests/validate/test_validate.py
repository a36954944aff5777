"""``rpl validate`` on Spark (local[2]): a clean run validates clean, and each seeded
fault is found with its node, file, position and GTID."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path

from faults import events, find, rewrite, swap

from rpl.core.binlog.events import (
    GTID_LOG_EVENT,
    WRITE_ROWS_EVENT,
    XID_EVENT,
    GtidEvent,
    QueryEvent,
    set_log_pos,
)
from rpl.core.binlog.logfile import LogEntry
from rpl.core.validate.findings import NOTICE, Finding
from rpl.core.validate.report import Report

Check = Callable[..., Report]


def _insert(entry: LogEntry) -> bool:
    """A WRITE_ROWS event (the recorded run logs rows, binlog_format=ROW)."""
    return entry.header.type_code == WRITE_ROWS_EVENT


def _only(report: Report, check: str) -> list[Finding]:
    found = [f for f in report.violations if f.check == check]
    assert found, f"no {check} violation in:\n{report.summary()}"
    assert report.method == "exact", "the sketches did not see it"
    assert report.unproven or report.history_operations, "sketches run without a history"
    return found


def _transactions(path: Path, relay: bool = False) -> list[list[LogEntry]]:
    """The file's GTID groups (each from its GTID event to its end)."""
    groups: list[list[LogEntry]] = []
    for entry in events(path, relay):
        if entry.header.type_code == GTID_LOG_EVENT:
            groups.append([entry])
        elif (
            groups
            and groups[-1][-1].header.type_code not in (XID_EVENT,)
            and not (
                len(groups[-1]) == 2
                and isinstance(groups[-1][1].event, QueryEvent)
                and groups[-1][1].event.query != "BEGIN"
            )
        ):
            groups[-1].append(entry)
    return groups


def test_clean_run_validates_clean(check: Check, run: Path) -> None:
    report = check()
    assert report.violations == [], report.summary()
    assert report.exit_code == 0
    assert set(report.checks) == {
        "structure",
        "transactions",
        "relay_vs_source",
        "applied_vs_source",
    }
    expected = sum(
        len(events(p, "relay" in p.name))
        for n in ("source", "replica")
        for p in (run / n).glob("*.0*")
    )
    assert report.events == expected
    counts = report.logs
    assert counts["source"]["binlog"].files == 3
    assert counts["replica"]["relay"].transactions >= 41
    assert counts["replica"]["binlog"].transactions == counts["source"]["binlog"].transactions
    assert report.method == "sketches", report.unproven
    exact = check(exact=True)
    assert (exact.method, exact.violations, exact.logs) == ("exact", [], report.logs)


def test_flipped_byte(check: Check, run: Path) -> None:
    path = run / "source" / "binlog.000002"
    target = find(path, _insert, nth=2)
    rewrite(
        path, lambda data: data.__setitem__(target.position + 40, data[target.position + 40] ^ 0x10)
    )
    report = check("source")
    structure = _only(report, "structure")
    assert [(f.node, f.file, f.position) for f in structure] == [
        ("source", "binlog.000002", target.position)
    ]
    assert "CRC32 mismatch" in structure[0].detail
    assert report.exit_code == 1


def test_bad_magic(check: Check, run: Path) -> None:
    path = run / "source" / "binlog.000002"
    rewrite(path, lambda data: data.__setitem__(1, ord("B")))
    report = check("source")
    structure = _only(report, "structure")
    assert [(f.file, f.position) for f in structure] == [("binlog.000002", 0)]
    assert "bad magic number" in structure[0].detail


def test_truncated_file(check: Check, run: Path) -> None:
    path = run / "source" / "binlog.000002"
    target = find(path, _insert, nth=4)
    rewrite(path, lambda data: data.__delitem__(slice(target.position + 30, None)))
    report = check("source")
    lines = [(f.file, f.position, f.detail) for f in _only(report, "structure")]
    assert ("binlog.000002", target.position) in [(f, p) for f, p, _ in lines]
    assert any("ends inside an event" in d for _, _, d in lines)
    assert any("ends with neither a ROTATE to binlog.000003" in f.detail for f in report.notices)


def test_truncated_last_file_is_a_notice(check: Check, run: Path) -> None:
    path = run / "source" / "binlog.000003"
    target = find(path, _insert, nth=3)
    rewrite(path, lambda data: data.__delitem__(slice(target.position + 30, None)))
    report = check("source")
    assert report.violations == [], report.summary()
    notices = [(f.check, f.position) for f in report.findings if f.severity == NOTICE]
    assert ("structure", target.position) in notices
    assert report.exit_code == 0


def test_missing_event(check: Check, run: Path) -> None:
    path = run / "source" / "binlog.000002"
    target = find(path, _insert, nth=3)
    rewrite(path, lambda data: data.__delitem__(slice(target.position, target.end)))
    report = check("source")
    structure = _only(report, "structure")
    assert [(f.file, f.position) for f in structure] == [("binlog.000002", target.position)]
    assert "an event missing, or one too many" in structure[0].detail


def test_duplicated_event(check: Check, run: Path) -> None:
    path = run / "source" / "binlog.000002"
    target = find(path, _insert, nth=1)
    rewrite(path, lambda data: data.__setitem__(slice(target.end, target.end), target.raw))
    report = check("source")
    structure = _only(report, "structure")
    assert [(f.file, f.position) for f in structure] == [("binlog.000002", target.end)]


def test_reordered_transaction(check: Check, run: Path) -> None:
    path = run / "replica" / "binlog.000001"
    groups = _transactions(path)
    first, second = groups[-3], groups[-2]
    swap(path, first, second)
    report = check()
    order = _only(report, "applied_vs_source")
    moved = str(first[0].event.gtid)  # type: ignore[attr-defined]
    assert [(f.node, f.gtid) for f in order] == [("replica", moved)], report.summary()
    assert "out of the source's order" in order[0].detail
    assert "applied out of the source's order" in report.unproven
    assert not [f for f in report.violations if f.check == "structure"]


def test_errant_gtid(check: Check, run: Path) -> None:
    path = run / "replica" / "binlog.000001"
    target = find(path, lambda e: isinstance(e.event, GtidEvent), nth=-1)
    errant = uuid.UUID(int=0xE44A47)

    def retag(data: bytearray) -> None:
        at = target.position + 19 + 1
        data[at : at + 16] = errant.bytes
        set_log_pos(data, target.position, target.header.log_pos, True)

    rewrite(path, retag)
    report = check()
    errant_findings = [f for f in _only(report, "applied_vs_source") if "errant" in f.detail]
    assert [(f.node, f.file, f.position, f.gtid) for f in errant_findings] == [
        ("replica", "binlog.000001", target.position, f"{errant}:{target.event.gno}")  # type: ignore[attr-defined]
    ]
    assert "never had" in report.unproven


def test_relay_event_differs_from_source(check: Check, run: Path) -> None:
    path = run / "replica" / "relay-bin.000001"
    target = find(path, _insert, relay=True, nth=5)
    group = next(g for g in _transactions(path, relay=True) if target in g)

    def alter(data: bytearray) -> None:
        # the row's value 'v<key>', after the header and the rows post-header
        at = data.index(b"v", target.position + 19 + 10, target.end)
        data[at] = ord("x")
        set_log_pos(data, target.position, target.header.log_pos, True)

    rewrite(path, alter)
    report = check()
    differs = _only(report, "relay_vs_source")
    assert [(f.node, f.file, f.position) for f in differs] == [
        ("replica", "relay-bin.000001", group[0].position)
    ]
    assert f"event {group.index(target) + 1} of the transaction differs" in differs[0].detail
    assert differs[0].gtid == str(group[0].event.gtid)  # type: ignore[attr-defined]
    assert "differ from the source's" in report.unproven


def test_relay_misses_a_transaction(check: Check, run: Path) -> None:
    path = run / "replica" / "relay-bin.000001"
    group = _transactions(path, relay=True)[10]
    rewrite(path, lambda data: data.__delitem__(slice(group[0].position, group[-1].end)))
    report = check()
    gtid = str(group[0].event.gtid)  # type: ignore[attr-defined]
    missing = _only(report, "relay_vs_source")
    assert [(f.node, f.gtid) for f in missing] == [("replica", gtid)], report.summary()
    assert "misses the source's transaction" in missing[0].detail
    assert "differ from the source's" in report.unproven


def test_relay_misses_an_event(check: Check, run: Path) -> None:
    path = run / "replica" / "relay-bin.000001"
    target = find(path, _insert, relay=True, nth=8)
    rewrite(path, lambda data: data.__delitem__(slice(target.position, target.end)))
    report = check()
    gap = [f for f in _only(report, "relay_vs_source") if "missing" in f.detail]
    source_pos = target.header.log_pos - target.header.event_size
    assert [(f.file, f.position) for f in gap] == [("relay-bin.000001", target.position)]
    assert f"[{source_pos}, {target.header.log_pos}) missing" in gap[0].detail


def _history(path: Path, records: list[dict[str, object]]) -> str:
    base = {"start": 1.0, "end": 1.1, "outcome": "ok", "table": "d.t"}
    path.write_text("".join(json.dumps({**base, **r}) + "\n" for r in records))
    return str(path)


def test_history(check: Check, run: Path) -> None:
    history = _history(
        run / "history.jsonl",
        [
            {"client": "w1", "op": "write", "key": 5, "value": "v5"},
            {"client": "w1", "op": "write", "key": 999, "value": "v999"},
            {"client": "w2", "op": "write", "key": 998, "value": "lost?", "outcome": "unknown"},
            {"client": "r1", "op": "read", "key": 7, "value": "changed"},
            {"client": "r1", "op": "read", "key": 6, "value": "never"},
            {"client": "r1", "op": "read", "key": 997, "value": None},
        ],
    )
    report = check(history=history, expect_on="replica")
    found = sorted((f.position, f.node) for f in _only(report, "history"))
    assert found == [(2, "replica"), (5, "replica")], report.summary()
    assert "acknowledged write lost" in report.summary()
    assert "read of a value never committed" in report.summary()


def test_history_clean(check: Check, run: Path) -> None:
    history = _history(
        run / "history.jsonl",
        [
            {"client": "w1", "op": "write", "key": k, "value": f"v{k}"}
            for k in range(1, 41)
            if k != 7
        ],
    )
    report = check(history=history)
    assert report.violations == [], report.summary()
    assert report.history_operations == 39


def test_history_read_lost_on_the_named_node(check: Check, run: Path) -> None:
    path = run / "replica" / "binlog.000001"
    last = _transactions(path)[-1]
    rewrite(path, lambda data: data.__delitem__(slice(last[0].position, None)))
    history = _history(
        run / "history.jsonl",
        [
            {"client": "r1", "op": "read", "key": 100, "value": "v100", "node": "replica"},
            {"client": "r1", "op": "read", "key": 100, "value": "v100", "node": "source"},
        ],
    )
    report = check(history=history)
    lost = _only(report, "history")
    assert [(f.node, f.position) for f in lost] == [("replica", 1)], report.summary()
    assert "read lost" in lost[0].detail
