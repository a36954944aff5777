"""The split scanner without Spark: every split size gives the same events and
transactions as reading each file whole with the codec, on a real run and on a synthetic
one with size-rotated relay logs, in statements and in rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from rpl.core.binlog.logfile import read_events
from rpl.core.testing.binlogs import write_topology
from rpl.core.validate.layout import discover_all, plan_splits
from rpl.core.validate.scan import scan_all
from rpl.core.validate.stitch import stitch


def _codec_counts(root: Path) -> tuple[int, list[str]]:
    events, gtids = 0, []
    for node in discover_all([str(root / "source"), str(root / "replica")]):
        for log in node.files:
            for entry in read_events(log.path, check_log_pos=log.kind == "binlog"):
                events += 1
                gtid = getattr(entry.event, "gtid", None)
                if gtid is not None:
                    gtids.append(f"{node.name}/{log.kind}/{gtid}")
    return events, sorted(gtids)


def _scan_counts(root: Path, split_bytes: int) -> tuple[int, list[str], list[str]]:
    nodes = discover_all([str(root / "source"), str(root / "replica")])
    rows = scan_all(plan_splits(nodes, split_bytes))
    findings, _ = stitch(nodes, [(r.split, r.summary) for r in rows])
    findings += [f for r in rows for f in r.findings]
    gtids = sorted(
        f"{r.split.file.node}/{r.split.file.kind}/{t.gtid}" for r in rows for t in r.transactions
    )
    return sum(r.summary.events for r in rows), gtids, [f.line() for f in findings]


@pytest.mark.parametrize("split_bytes", [1024, 1500, 4096, 1 << 20])
def test_real_run_any_split_size(recorded_run: Path, split_bytes: int) -> None:
    expected_events, expected_gtids = _codec_counts(recorded_run)
    events, gtids, findings = _scan_counts(recorded_run, split_bytes)
    assert findings == []
    assert events == expected_events
    assert gtids == expected_gtids


@pytest.mark.parametrize("rows", [False, True], ids=["statements", "rows"])
def test_synthetic_run_with_rotations(tmp_path: Path, rows: bool) -> None:
    run = write_topology(tmp_path, 3000, max_file_bytes=64 << 10, rows=rows, rows_query=rows)
    relay_files = (tmp_path / "replica" / "relay-bin.index").read_text().split()
    assert len(relay_files) > 3, "the relay log was rotated by size"
    expected_events, expected_gtids = _codec_counts(tmp_path)
    assert expected_events == run.events
    events, gtids, findings = _scan_counts(tmp_path, 10_000)
    assert findings == []
    assert (events, gtids) == (expected_events, expected_gtids)
