"""Acceptance: binlog files written with the codec are read cleanly by ``mariadb-binlog``.

MariaDB's reader checks sizes, log positions, the FD's post-header array and (with
``--verify-binlog-checksum``) every CRC, and it parses QUERY, XID, ROTATE and STOP bodies
(GTID/PREVIOUS_GTIDS become "Ignorable"): a file it prints without complaint is a good
check of the byte layouts. The tool is required: CI installs it (Debian package
mariadb-client), and the test fails, not skips, when it is missing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import uuid
import zlib
from pathlib import Path

import pytest

from rpl.core.binlog import events as ev
from rpl.core.binlog import logfile as lf
from rpl.core.binlog.gtid import GtidSet

SID = uuid.UUID("3e11fa47-71ca-11e1-9e33-c80aa9429562")
SERVER_ID = 42
TIMESTAMP = 1_700_000_000


@pytest.fixture(scope="module")
def mariadb_binlog() -> str:
    tool = shutil.which("mariadb-binlog")
    if tool is None:
        pytest.fail(
            "mariadb-binlog is not installed (apt-get install mariadb-client): "
            "this acceptance test needs it"
        )
    return tool


class FileBuilder:
    """Writes a binlog file the way the server does: every event relocated to its offset."""

    def __init__(self, checksum: bool = True) -> None:
        self.checksum = checksum
        self.data = bytearray(ev.BINLOG_MAGIC)
        self.offsets: list[int] = []
        self.add(
            ev.FormatDescriptionEvent(created=TIMESTAMP, checksum_alg=1 if checksum else 0),
            flags=ev.LOG_EVENT_BINLOG_IN_USE_F,
        )

    def add(self, event: ev.Event, flags: int = 0) -> None:
        raw = ev.encode_event(
            event, server_id=SERVER_ID, timestamp=TIMESTAMP, flags=flags, checksum=self.checksum
        )
        self.offsets.append(len(self.data))
        self.data += raw
        ev.set_log_pos(self.data, self.offsets[-1], len(self.data), self.checksum)

    def transaction(self, gno: int, statements: list[str], xid: int) -> None:
        begin = query("BEGIN", updated=None)
        rest = [begin, *(query(s) for s in statements), ev.XidEvent(xid)]
        length = sum(
            len(ev.encode_event(e, server_id=0, timestamp=0, checksum=self.checksum)) for e in rest
        )
        self.add(
            ev.GtidEvent(
                SID,
                gno,
                last_committed=gno - 1,
                sequence_number=gno,
                immediate_commit_timestamp=TIMESTAMP * 1_000_000,
            ).with_transaction_length(length, checksum=self.checksum)
        )
        for event in rest:
            self.add(event, flags=ev.LOG_EVENT_SUPPRESS_USE_F if event is begin else 0)

    def ddl(self, gno: int, statement: str) -> None:
        event = query(statement)
        length = len(ev.encode_event(event, server_id=0, timestamp=0, checksum=self.checksum))
        self.add(
            ev.GtidEvent(SID, gno, sequence_number=1).with_transaction_length(
                length, checksum=self.checksum
            )
        )
        self.add(event)

    def close(self, last: ev.RotateEvent | ev.StopEvent) -> None:
        self.add(last)
        self.data[21] &= ~ev.LOG_EVENT_BINLOG_IN_USE_F  # the one in-place edit MySQL makes

    def write(self, path: Path) -> Path:
        path.write_bytes(self.data)
        return path


def query(text: str, updated: list[str] | None = None) -> ev.QueryEvent:
    return ev.QueryEvent(
        thread_id=8,
        exec_time=0,
        error_code=0,
        status_vars=ev.default_status_vars(
            updated_db_names=["shop"] if updated is None and text != "BEGIN" else updated
        ),
        db="shop",
        query=text,
    )


def two_files(tmp_path: Path, checksum: bool = True) -> tuple[FileBuilder, Path, Path]:
    first = FileBuilder(checksum)
    first.add(ev.PreviousGtidsEvent(GtidSet()), flags=ev.LOG_EVENT_IGNORABLE_F)
    first.transaction(1, ["INSERT INTO orders VALUES (1, 'apple')"], xid=101)
    first.transaction(
        2,
        ["INSERT INTO orders VALUES (2, 'pear')", "UPDATE stock SET n = n - 1 WHERE item = 'pear'"],
        xid=102,
    )
    first.ddl(3, "CREATE TABLE audit (id INT PRIMARY KEY)")
    first.close(ev.RotateEvent(4, "binlog.000002"))
    second = FileBuilder(checksum)
    second.add(ev.PreviousGtidsEvent(GtidSet.parse(f"{SID}:1-3")), flags=ev.LOG_EVENT_IGNORABLE_F)
    second.transaction(4, ["DELETE FROM orders WHERE id = 1"], xid=103)
    second.close(ev.StopEvent())
    return (
        first,
        first.write(tmp_path / "binlog.000001"),
        second.write(tmp_path / "binlog.000002"),
    )


def run(tool: str, *args: str | Path) -> tuple[int, str, str]:
    done = subprocess.run(
        [tool, *map(str, args)], capture_output=True, text=True, timeout=60, check=False
    )
    return done.returncode, done.stdout, done.stderr


def assert_clean(code: int, out: str, err: str) -> None:
    assert code == 0, f"mariadb-binlog exited {code}:\n{err}\n{out}"
    for pattern in ("ERROR", "(?i)invalid", "(?i)warning", "(?i)corrupt", r"(?i)\berror\b"):
        assert not re.search(pattern, out + err), f"{pattern!r} in output:\n{err}\n{out}"


@pytest.mark.parametrize("checksum", [True, False])
def test_mariadb_binlog_reads_our_files(
    tmp_path: Path, mariadb_binlog: str, checksum: bool
) -> None:
    first, path1, path2 = two_files(tmp_path, checksum)
    flags = ["--verify-binlog-checksum"] if checksum else []
    code, out, err = run(mariadb_binlog, "--base64-output=never", *flags, path1, path2)
    assert_clean(code, out, err)
    for statement in (
        "INSERT INTO orders VALUES (1, 'apple')",
        "INSERT INTO orders VALUES (2, 'pear')",
        "UPDATE stock SET n = n - 1 WHERE item = 'pear'",
        "CREATE TABLE audit (id INT PRIMARY KEY)",
        "DELETE FROM orders WHERE id = 1",
    ):
        assert f"\n{statement}\n/*!*/;" in out, statement
    assert out.count("\nBEGIN\n") == 3
    for xid in (101, 102, 103):
        assert f"Xid = {xid}\nCOMMIT/*!*/;" in out
    assert "Rotate to binlog.000002  pos: 4" in out
    assert "Stop" in out
    assert "server v 8.0.36-rpl" in out
    assert "use `shop`" in out
    assert out.count("Ignorable event type 33 (MySQL Gtid)") == 4
    assert out.count("Ignorable event type 35 (MySQL Previous_gtids)") == 2
    # Every event's end_log_pos is where we put the next event.
    ends = [int(n) for n in re.findall(r"end_log_pos (\d+)", out)]
    first_ends = first.offsets[1:] + [len(first.data)]
    assert ends[: len(first_ends)] == first_ends
    assert ends[0] == 126
    assert ends[1] == (157 if checksum else 153)
    if checksum:
        assert len(re.findall(r"end_log_pos \d+ CRC32 0x", out)) == len(ends)


def test_mariadb_binlog_starts_at_a_transaction(tmp_path: Path, mariadb_binlog: str) -> None:
    first, path1, _ = two_files(tmp_path)
    second_gtid = first.offsets[6]  # FD, PREV, GTID BEGIN INSERT XID, then GTID of trx 2
    code, out, err = run(
        mariadb_binlog,
        "--base64-output=never",
        "--verify-binlog-checksum",
        f"--start-position={second_gtid}",
        path1,
    )
    assert_clean(code, out, err)
    assert "'apple'" not in out
    assert "INSERT INTO orders VALUES (2, 'pear')" in out
    assert f"# at {second_gtid}\n" in out


def test_our_reader_agrees_with_mariadb(tmp_path: Path, mariadb_binlog: str) -> None:
    first, path1, path2 = two_files(tmp_path)
    _, out, _ = run(mariadb_binlog, "--base64-output=never", path1)
    positions = [int(n) for n in re.findall(r"^# at (\d+)$", out, re.MULTILINE)]
    assert positions == [entry.position for entry in lf.read_events(path1)]
    assert lf.scan_valid_prefix(path2).error is None


def test_mariadb_binlog_warns_about_a_file_in_use(tmp_path: Path, mariadb_binlog: str) -> None:
    builder = FileBuilder()
    builder.add(ev.PreviousGtidsEvent(GtidSet()))
    builder.transaction(1, ["INSERT INTO orders VALUES (9, 'fig')"], xid=7)
    path = builder.write(tmp_path / "binlog.000001")  # not closed: IN_USE still set
    code, out, err = run(mariadb_binlog, "--base64-output=never", "--verify-binlog-checksum", path)
    assert code == 0, err
    assert "in use or was not closed properly" in out
    assert "INSERT INTO orders VALUES (9, 'fig')" in out


def test_mariadb_binlog_catches_a_bad_crc(tmp_path: Path, mariadb_binlog: str) -> None:
    """The tool does check what we rely on it for: a damaged CRC fails it."""
    first, path1, _ = two_files(tmp_path)
    damaged = bytearray(first.data)
    damaged[first.offsets[3] + 40] ^= 0x01  # inside the first INSERT
    path1.write_bytes(damaged)
    code, out, err = run(mariadb_binlog, "--base64-output=never", "--verify-binlog-checksum", path1)
    assert code != 0
    assert "crc check failed" in err.lower()
    assert f"offset {first.offsets[3]}" in err


def test_mariadb_binlog_computes_the_fd_crc_with_in_use_cleared(
    tmp_path: Path, mariadb_binlog: str
) -> None:
    """An FD whose CRC covers the IN_USE bit as set is rejected: our rule is MariaDB's."""
    builder = FileBuilder()
    builder.add(ev.PreviousGtidsEvent(GtidSet()))
    wrong = bytearray(builder.data)
    fd_end = builder.offsets[1]
    wrong[fd_end - 4 : fd_end] = zlib.crc32(wrong[4 : fd_end - 4]).to_bytes(4, "little")
    assert wrong != builder.data
    code, out, err = run(
        mariadb_binlog,
        "--base64-output=never",
        "--verify-binlog-checksum",
        builder.write(tmp_path / "good.000001"),
    )
    assert code == 0, err
    (tmp_path / "wrong.000001").write_bytes(wrong)
    code, out, err = run(
        mariadb_binlog,
        "--base64-output=never",
        "--verify-binlog-checksum",
        tmp_path / "wrong.000001",
    )
    assert code != 0 and "crc check failed" in err.lower(), (code, err, out)


def test_mariadb_binlog_reads_a_view_change_transaction(
    tmp_path: Path, mariadb_binlog: str
) -> None:
    """A Group Replication view change is a transaction of its own: GTID, BEGIN,
    VIEW_CHANGE, COMMIT; the reader checks its size and CRC and names it."""
    builder = FileBuilder()
    builder.add(ev.PreviousGtidsEvent(GtidSet()), flags=ev.LOG_EVENT_IGNORABLE_F)
    builder.transaction(1, ["INSERT INTO orders VALUES (1, 'apple')"], xid=101)
    begin, commit = query("BEGIN", updated=None), query("COMMIT", updated=None)
    view_change = ev.ViewChangeEvent("1700000000:3", 0, ((b"gtid_extracted", f"{SID}:1".encode()),))
    length = sum(
        len(ev.encode_event(e, server_id=0, timestamp=0)) for e in (begin, view_change, commit)
    )
    builder.add(
        ev.GtidEvent(SID, 2, last_committed=1, sequence_number=2).with_transaction_length(length)
    )
    for event in (begin, view_change, commit):
        builder.add(event)
    builder.transaction(3, ["INSERT INTO orders VALUES (3, 'fig')"], xid=103)
    builder.close(ev.StopEvent())
    path = builder.write(tmp_path / "binlog.000001")
    code, out, err = run(mariadb_binlog, "--base64-output=never", "--verify-binlog-checksum", path)
    assert code == 0, err
    assert "Ignorable event type 37 (View_change)" in out
    assert "INSERT INTO orders VALUES (3, 'fig')" in out
    assert f"# at {builder.offsets[-3]}\n" in out  # the transaction after it, where we put it
    assert [e.event for e in lf.read_events(path)][8] == view_change  # our reader too
