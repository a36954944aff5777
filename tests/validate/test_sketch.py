"""The fast path without Spark: each split's sketch agrees with the exact scanner on the
same split (summary, transactions, fingerprints), at every split size, on a real run and
on a synthetic one with size-rotated logs; the sketches reconcile to a clean proof with
the exact scanner's counts; and a split the exact scanner has a finding in is never
sketched as regular."""

from __future__ import annotations

import functools
import uuid
from pathlib import Path

import numpy as np
import pytest
from faults import events, find, rewrite

from rpl.core.binlog import events as ev
from rpl.core.binlog.events import GtidEvent, QueryEvent, relocate_events
from rpl.core.testing.binlogs import write_topology
from rpl.core.validate.layout import RELAY, Split, discover_all, plan_splits
from rpl.core.validate.reconcile import Request, reconcile
from rpl.core.validate.scan import SplitRows, scan
from rpl.core.validate.sketch import (
    Group,
    Sketch,
    fingerprints,
    folded,
    restricted,
    sketch,
)


def flip_bit(data: bytearray, at: int) -> None:
    """Flip the lowest bit of the byte at ``at``."""
    data[at] ^= 0x01


def _expected_groups(rows: SplitRows) -> tuple[int, int, int]:
    """(count, xor, total) of the split's complete transactions, from the exact rows."""
    done = [t for t in rows.transactions if t.state == "complete"]
    if not done:
        return 0, 0, 0
    relay = rows.split.file.kind == RELAY
    pos = np.array([t.source_pos if relay else t.pos for t in done], np.int64)
    sid = np.array([np.frombuffer(uuid.UUID(t.gtid.split(":")[0]).bytes, "<u8") for t in done])
    gno = np.array([int(t.gtid.split(":")[1]) for t in done], np.int64)
    events = np.array([t.events for t in done], np.uint64)
    digest = np.array([t.digest for t in done], np.uint64)
    return folded(fingerprints(pos, sid, gno, events, digest))


def _folded(groups: list[Group]) -> tuple[int, int, int]:
    count, xor, total = 0, 0, 0
    for g in groups:
        count, xor, total = count + g.count, xor ^ g.xor, (total + g.total) % (1 << 64)
    return count, xor, total


_RESTRICTED: list[Request] = []


def _agree(root: Path, split_bytes: int) -> list[tuple[Split, Sketch]]:
    nodes = discover_all([str(root / "source"), str(root / "replica")])
    made = []
    for split in plan_splits(nodes, split_bytes):
        fast, exact = sketch(split), scan(split)
        assert fast.irregular == "", fast.irregular
        assert fast.summary == exact.summary, split
        assert _folded(fast.groups) == _expected_groups(exact), split
        made.append((split, fast))
    proof = reconcile(nodes, made, _local_restrict)
    assert proof.unproven == "", proof.unproven
    events = sum(s.summary.events for _, s in made)
    assert sum(c.events for kinds in proof.logs.values() for c in kinds.values()) == events
    return made


def _local_restrict(requests: list[Request]) -> list[tuple[int, int, int]]:
    _RESTRICTED.extend(requests)
    return [restricted(split, lo, hi) for split, lo, hi in requests]


@pytest.mark.parametrize("split_bytes", [1024, 1500, 4096, 1 << 20])
def test_real_run_sketches_agree_with_the_exact_scan(recorded_run: Path, split_bytes: int) -> None:
    _agree(recorded_run, split_bytes)


@pytest.mark.parametrize("rows", [False, True], ids=["statements", "rows"])
@pytest.mark.parametrize("split_bytes", [3000, 10_000, 1 << 20])
def test_synthetic_run_sketches_agree(tmp_path: Path, split_bytes: int, rows: bool) -> None:
    write_topology(tmp_path, 3000, max_file_bytes=64 << 10, rows=rows, rows_query=rows)
    _agree(tmp_path, split_bytes)


def test_a_relay_log_that_stops_early_is_summed_over_its_span(tmp_path: Path) -> None:
    """The receiver stopped in the middle of the source's last file: the source split
    the span cuts is summed over its part only."""
    write_topology(tmp_path, 3000, max_file_bytes=64 << 10)
    last = (tmp_path / "replica" / "relay-bin.index").read_text().split()[-1]
    path = tmp_path / "replica" / last
    cut = find(path, lambda e: isinstance(e.event, GtidEvent), relay=True, nth=100)
    rewrite(path, lambda data: data.__delitem__(slice(cut.position, None)))
    _RESTRICTED.clear()
    _agree(tmp_path, 5000)
    assert [s.file.node for s, _, _ in _RESTRICTED] == ["source"], "one source split cut"


def test_a_split_with_a_finding_is_never_regular(recorded_run: Path, tmp_path: Path) -> None:
    """Each byte of one WRITE_ROWS event (a real server's binlog, binlog_format=ROW)
    flipped in turn: the split that holds it is irregular whenever the exact scanner has
    a finding there."""
    import shutil

    shutil.copytree(recorded_run / "source", tmp_path / "source")
    path = tmp_path / "source" / "binlog.000002"
    target = find(path, lambda e: e.header.type_code == ev.WRITE_ROWS_EVENT, nth=1)
    original = path.read_bytes()
    for offset in range(target.position, target.end):
        path.write_bytes(original)
        rewrite(path, functools.partial(flip_bit, at=offset))
        node = discover_all([str(tmp_path / "source")])
        for split in plan_splits(node, 1 << 20):
            if split.file.name != "binlog.000002":
                continue
            exact = scan(split)
            if exact.findings:
                assert sketch(split).irregular, (offset, exact.findings[0].line())


@pytest.mark.parametrize("kind", [ev.TABLE_MAP_EVENT, ev.WRITE_ROWS_EVENT])
def test_a_rows_event_with_a_finding_is_never_regular(tmp_path: Path, kind: int) -> None:
    """Each byte of one TABLE_MAP or WRITE_ROWS event of a row-format binlog flipped in
    turn: the split that holds it is irregular whenever the exact scanner has a finding
    there (and the exact scanner has one for every flip: the CRC32)."""
    write_topology(tmp_path, 40, rows=True)
    path = tmp_path / "source" / "binlog.000001"
    target = find(path, lambda e: e.header.type_code == kind, nth=20)
    original = path.read_bytes()
    for offset in range(target.position, target.end):
        path.write_bytes(original)
        rewrite(path, functools.partial(flip_bit, at=offset))
        for split in plan_splits(discover_all([str(tmp_path / "source")]), 1 << 20):
            exact = scan(split)
            assert exact.findings, offset
            assert sketch(split).irregular, (offset, exact.findings[0].line())


def test_rows_events_outside_begin_are_findings_and_irregular(tmp_path: Path) -> None:
    """A row transaction whose BEGIN is gone (the GTID event's next is its TABLE_MAP),
    and rows events after a transaction's XID: the exact scanner reports both, and the
    sketch of the split is irregular."""
    write_topology(tmp_path, 10, rows=True)
    path = tmp_path / "source" / "binlog.000001"
    begin = find(
        path, lambda e: isinstance(e.event, QueryEvent) and e.event.query == "BEGIN", nth=3
    )
    xid = find(path, lambda e: isinstance(e.event, ev.XidEvent), nth=6)
    rows = [
        e for e in events(path) if e.header.type_code in (ev.TABLE_MAP_EVENT, ev.WRITE_ROWS_EVENT)
    ]
    stray = b"".join(e.raw for e in rows[-2:])

    def edit(data: bytearray) -> None:
        data[xid.end : xid.end] = stray  # after the 7th transaction (a later position first)
        del data[begin.position : begin.end]
        moved = data[4:]
        relocate_events(moved, 4, checksum=True)
        data[4:] = moved

    rewrite(path, edit)
    split = plan_splits(discover_all([str(tmp_path / "source")]), 1 << 20)[0]
    found = [f.detail for f in scan(split).findings if f.check == "transactions"]
    assert found == [
        "rows event of type 19 in a GTID group before its BEGIN",
        "rows event of type 30 in a GTID group before its BEGIN",
        "event of type 19 outside a GTID group",
        "event of type 30 outside a GTID group",
    ], found
    assert sketch(split).irregular


def test_a_rows_event_altered_in_the_relay_log_changes_its_digest(tmp_path: Path) -> None:
    """One digit of a WRITE_ROWS row changed in the relay log (CRC32 redone, so the event
    is intact): the exact scanner's digest of that transaction, and the sketch's
    fingerprint of the relay log, no longer equal the source's; every other transaction's
    digest still does."""
    write_topology(tmp_path, 40, rows=True)
    relay = tmp_path / "replica" / "relay-bin.000001"
    target = find(relay, lambda e: e.header.type_code == ev.WRITE_ROWS_EVENT, relay=True, nth=5)

    def digests() -> tuple[dict[str, dict[str, int]], dict[str, tuple[int, int, int]]]:
        nodes = discover_all([str(tmp_path / "source"), str(tmp_path / "replica")])
        exact: dict[str, dict[str, int]] = {}
        sketched: dict[str, tuple[int, int, int]] = {}
        for split in plan_splits(nodes, 1 << 20):
            if split.file.name not in ("binlog.000001", "relay-bin.000001"):
                continue
            key = f"{split.file.node}/{split.file.kind}"
            if key == "replica/binlog":
                continue
            rows = scan(split)
            exact[key] = {t.gtid: t.digest for t in rows.transactions}
            made = sketch(split)
            assert made.irregular == "", made.irregular
            sketched[key] = _folded(made.groups)
        return exact, sketched

    exact, sketched = digests()
    assert exact["replica/relay"] == exact["source/binlog"]
    assert sketched["replica/relay"] == sketched["source/binlog"]

    def alter(data: bytearray) -> None:
        last_digit = target.end - ev.CHECKSUM_LEN - 1
        data[last_digit] = ord("7") if data[last_digit] != ord("7") else ord("8")
        ev.set_log_pos(data, target.position, target.header.log_pos, True)

    rewrite(relay, alter)
    exact, sketched = digests()
    differ = [g for g, d in exact["replica/relay"].items() if exact["source/binlog"][g] != d]
    assert len(differ) == 1 and len(exact["replica/relay"]) == 40
    assert sketched["replica/relay"] != sketched["source/binlog"]
