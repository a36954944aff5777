"""Relay log recovery on a relay log of row transactions (binlog_format=ROW: GTID, BEGIN,
ROWS_QUERY, TABLE_MAP, WRITE_ROWS, XID), written with the codec as a receiver writes it:
cut at every event boundary (and every byte) inside its last transaction, the copy is cut
back to that transaction's start, and the receiver position and retrieved GTIDs are those
after the transaction before it; cut after its XID, nothing is cut."""

from __future__ import annotations

from pathlib import Path

import pytest

from rpl.core.binlog import events as ev
from rpl.core.binlog.gtid import Gtid
from rpl.core.binlog.logfile import LogCorrupt, LogEntry, read_events, scan_valid_prefix
from rpl.core.binlog.trim import truncate_tail
from rpl.core.replication.relay_log_recovery import RelayScan
from rpl.core.testing.binlogs import REPLICA_ID, write_topology

_ROW_TYPES = (
    ev.ROWS_QUERY_LOG_EVENT,
    ev.TABLE_MAP_EVENT,
    ev.WRITE_ROWS_EVENT,
    ev.UPDATE_ROWS_EVENT,
    ev.DELETE_ROWS_EVENT,
)


def _relay_log(root: Path) -> tuple[Path, list[LogEntry], int]:
    """A row-format relay log of 20 transactions, its events, the index of its last GTID."""
    write_topology(root, 20, rows=True, rows_query=True)
    path = root / "replica" / "relay-bin.000001"
    entries = list(read_events(path, check_log_pos=False))
    gtid_at = max(i for i, e in enumerate(entries) if isinstance(e.event, ev.GtidEvent))
    assert [e.header.type_code for e in entries[gtid_at:]] == [
        ev.GTID_LOG_EVENT,
        ev.QUERY_EVENT,
        ev.ROWS_QUERY_LOG_EVENT,
        ev.TABLE_MAP_EVENT,
        ev.WRITE_ROWS_EVENT,
        ev.XID_EVENT,
    ]
    return path, entries, gtid_at


def _recovered(copy: Path) -> RelayScan:
    scan = RelayScan(REPLICA_ID)
    truncate_tail(copy, "relay log", relay=True, visit=scan.visit, wanted=scan.WANTED)
    return scan


@pytest.mark.parametrize("every", ["event", "byte"])
def test_a_row_transaction_cut_inside_is_cut_whole(tmp_path: Path, every: str) -> None:
    path, entries, gtid_at = _relay_log(tmp_path)
    data = path.read_bytes()
    boundary = entries[gtid_at].position
    gtids = [Gtid(e.event.sid, e.event.gno) for e in entries if isinstance(e.event, ev.GtidEvent)]
    copy = tmp_path / "relay-copy"
    copy.write_bytes(data[:boundary])
    before = RelayScan(REPLICA_ID)
    scan_valid_prefix(copy, check_log_pos=False, visit=before.visit, wanted=before.WANTED)
    assert gtids[-1] not in before.gtids and all(g in before.gtids for g in gtids[:-1])
    assert before.position == ("binlog.000001", entries[gtid_at - 1].header.log_pos)
    cuts = (
        [e.position for e in entries[gtid_at + 1 :]]
        if every == "event"
        else list(range(boundary + 1, len(data)))
    )
    for cut in cuts:
        copy.write_bytes(data[:cut])
        scan = _recovered(copy)
        assert copy.stat().st_size == boundary, cut
        assert scan.position == before.position, cut
        assert scan.gtids == before.gtids, cut


def test_a_row_transaction_ending_with_its_xid_is_kept(tmp_path: Path) -> None:
    path, entries, gtid_at = _relay_log(tmp_path)
    data = path.read_bytes()
    scan = _recovered(path)
    assert path.read_bytes() == data
    last = entries[gtid_at].event
    assert isinstance(last, ev.GtidEvent) and Gtid(last.sid, last.gno) in scan.gtids
    assert scan.position == ("binlog.000001", entries[-1].header.log_pos)
    assert sum(e.header.type_code in _ROW_TYPES for e in entries) == 3 * 20


def test_a_damaged_rows_event_with_events_after_it_is_not_a_tail(tmp_path: Path) -> None:
    """A flipped byte inside a TABLE_MAP in the middle of the file: the WRITE_ROWS right
    after it is an intact event, so this is no tail and recovery refuses to cut."""
    path, entries, _ = _relay_log(tmp_path)
    target = [e for e in entries if e.header.type_code == ev.TABLE_MAP_EVENT][-3]
    data = bytearray(path.read_bytes())
    data[target.position + 25] ^= 0x04
    path.write_bytes(bytes(data))
    scan = RelayScan(REPLICA_ID)
    with pytest.raises(LogCorrupt, match="intact events after it") as info:
        truncate_tail(path, "relay log", relay=True, visit=scan.visit, wanted=scan.WANTED)
    assert f"from position {target.end}" in str(info.value)
    assert path.read_bytes() == bytes(data)
