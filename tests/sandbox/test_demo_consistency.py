"""``rpl demo consistency``: the stale-read count on made-up histories and the verdict
per level (no processes); then ``--short`` end to end on a real group (the verdict, the
validator's agreement, the report, nothing left running), a loud failure when every
session is deliberately left at EVENTUAL, and Ctrl-C."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from test_demo import interrupt, servers_left

from rpl.core.demo.consistency import LevelRun, stale_reads
from rpl.core.demo.consistency_report import verdict
from rpl.core.validate.history import READ, WRITE, Operation

LEVELS = ("EVENTUAL", "BEFORE", "AFTER", "BEFORE_AND_AFTER")


def _write(value: str, start: float, end: float, key: str = "1") -> Operation:
    return Operation("writer-0", WRITE, "d.t", key, value, start, end, "ok")


def _read(value: str | None, start: float, end: float, key: str = "1") -> Operation:
    return Operation("reader-2.0", READ, "d.t", key, value, start, end, "ok", "member2")


def test_a_read_older_than_a_write_acknowledged_before_it_began_is_stale() -> None:
    history = [
        _write("writer-0-1", 1.0, 2.0),
        _write("writer-0-2", 3.0, 4.0),
        _read("writer-0-1", 2.5, 2.6),  # only -1 was acknowledged when it began: fresh
        _read("writer-0-1", 3.5, 3.6),  # -2 not acknowledged yet (it ended at 4.0): fresh
        _read("writer-0-1", 4.5, 4.6),  # -2 acknowledged at 4.0: stale
        _read("writer-0-2", 4.5, 4.7),  # fresh
        _read(None, 4.8, 4.9),  # no row at all after -2 was acknowledged: stale
        _read("writer-0-1", 5.0, 5.1, key="2"),  # no write of key 2: nothing to miss
    ]
    found = stale_reads(history, origin=1.0)
    assert [(round(at, 2), reader) for at, reader, _ in found] == [
        (3.6, "reader-2.0"),
        (3.9, "reader-2.0"),
    ]
    assert "'writer-0-2' was acknowledged" in found[0][2]


def test_the_verdict_says_broken_when_a_count_disagrees_or_a_level_reads_stale() -> None:
    stale = [(1.0, "reader-2.0", "read 'a', 'b' was acknowledged")]
    eventual = LevelRun("EVENTUAL", "d.eventual", stale=list(stale), validate_stale=1)
    assert eventual.kept and verdict(eventual) == "stale reads, as EVENTUAL allows"
    before = LevelRun("BEFORE", "d.before", stale=list(stale), validate_stale=1)
    assert not before.kept and verdict(before).startswith("BROKEN: 1 stale reads")
    disagree = LevelRun("AFTER", "d.after", validate_stale=3)
    assert not disagree.kept and "rpl validate counted 3" in verdict(disagree)
    lost = LevelRun("AFTER", "d.after", validate_stale=0, validate_others=["lost write"])
    assert not lost.kept and "other violations" in verdict(lost)
    kept = LevelRun("BEFORE_AND_AFTER", "d.b", validate_stale=0)
    assert kept.kept and verdict(kept) == "no stale read: the promise kept"


def demo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rpl.core.cli", "demo", "consistency", "--short", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def rows(stdout: str) -> dict[str, list[str]]:
    """The verdict table's rows by level."""
    found = {}
    for line in stdout.splitlines():
        cells = line.split()
        if cells and cells[0] in LEVELS:
            found[cells[0]] = cells
    return found


def test_short_demo_keeps_every_promise_and_the_validator_agrees(tmp_path: Path) -> None:
    directory = tmp_path / "demo"
    done = demo("--dir", str(directory))
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    table = rows(done.stdout)
    assert list(table) == list(LEVELS)
    for level in LEVELS:
        writes, stale, validated = table[level][1], table[level][6], table[level][7]
        assert int(writes) > 0
        assert validated == stale  # "<n> stale reads" by rpl validate, the same n
        if level != "EVENTUAL":
            assert stale == "0", done.stdout
    report = (directory / "report.html").read_text()
    assert report.count("data:image/png;base64,") == 2
    history = (directory / "history.jsonl").read_text()
    assert all(f'"d.{level.lower()}"' in history for level in LEVELS)
    assert (directory / "validate.txt").exists() and (directory / "validate.json").exists()
    assert servers_left(directory) == []


def test_levels_left_at_eventual_fail_loudly(tmp_path: Path) -> None:
    directory = tmp_path / "broken"
    done = demo("--dir", str(directory), "--break-levels", "--no-validate")
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    broken = [level for level, cells in rows(done.stdout).items() if "BROKEN:" in cells]
    assert broken, done.stdout
    assert all(int(rows(done.stdout)[level][6]) > 0 for level in broken)
    assert "did not keep the promise" in done.stderr
    assert servers_left(directory) == []


def test_ctrl_c_leaves_no_server_and_no_etcd_member_running(tmp_path: Path) -> None:
    directory = tmp_path / "interrupted"
    code, running = interrupt(
        ["consistency", "--seconds", "60", "--no-validate"], directory, "writers on the primary"
    )
    assert running == 6, "three servers and three etcd members"
    assert code == 130
    assert servers_left(directory) == []
