"""A full disk under a real server: the data directory is a small tmpfs mounted for the
test (as root) and filled with a file until only what the test allows is free.

What must hold: a checkpoint that cannot be written is abandoned (no ``checkpoint.tmp``
left behind, the server keeps serving); a clean shutdown ends; a restart on the still
full disk recovers every acknowledged row by replaying the binlog from the previous
checkpoint; a rotation that cannot create its next file answers ER_CANT_OPEN_FILE and
keeps logging to the current one. Each scenario counts rows acknowledged to the client
against rows found after the restart.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest

from rpl.core.testing.process import ServerProcess

DISK_BYTES = 16 * 1024 * 1024


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB tmpfs at ``tmp_path/data`` (the server's data directory)."""
    mount = tmp_path / "data"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"mounting a tmpfs needs root: {done.stderr}"
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(mount: Path, leave: int) -> Path:
    """Fill ``mount`` with a file until about ``leave`` bytes are free."""
    filler = mount / "filler"
    stat = os.statvfs(mount)
    free = stat.f_bavail * stat.f_frsize
    with filler.open("ab") as f:
        remaining = max(0, free - leave)
        chunk = b"\0" * (1 << 20)
        while remaining > 0:
            try:
                remaining -= f.write(chunk[: min(len(chunk), remaining)])
                f.flush()
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                break
    return filler


def insert_rows(server: ServerProcess, first: int, count: int, size: int = 1000) -> int:
    """Insert ``count`` rows of ``size`` random hex characters (incompressible enough)
    one per statement; the number acknowledged before the first error."""
    connection = server.connect()
    done = 0
    try:
        with connection.cursor() as cursor:
            for i in range(first, first + count):
                cursor.execute("INSERT INTO d.t VALUES (%s, %s)", (i, os.urandom(size // 2).hex()))
                done += 1
    except pymysql.MySQLError:
        pass
    finally:
        connection.close()
    return done


def started(mount: Path) -> ServerProcess:
    server = ServerProcess(mount, options=["--rpl-checkpoint-binlog-bytes=0"]).start()
    server.query("CREATE DATABASE d")
    server.query("CREATE TABLE d.t (id INT PRIMARY KEY, v TEXT)")
    return server


def count(server: ServerProcess) -> int:
    return int(server.query("SELECT COUNT(*) FROM d.t")[0][0])


def test_a_checkpoint_on_a_full_disk_is_abandoned_and_the_restart_recovers(disk: Path) -> None:
    server = started(disk)
    acknowledged = insert_rows(server, 1, 3000)
    assert acknowledged == 3000
    fill(disk, 1024 * 1024)  # room for the binlog, not for a ~3 MB checkpoint
    server.query("FLUSH BINARY LOGS")  # rotation succeeds; its checkpoint cannot be written
    assert not (disk / "checkpoint.tmp").exists()
    acknowledged += insert_rows(server, 10_001, 100)
    assert acknowledged == 3100
    assert count(server) == acknowledged

    assert server.stop(timeout=60) == 0  # shutdown ends though its checkpoint fails
    assert not (disk / "checkpoint.tmp").exists()
    server.start(timeout=120)  # the disk is still full
    assert count(server) == acknowledged
    assert not (disk / "checkpoint.tmp").exists()
    server.stop(timeout=60)


def test_a_rotation_that_cannot_create_its_file_keeps_the_current_one(disk: Path) -> None:
    server = started(disk)
    acknowledged = insert_rows(server, 1, 20)
    (before,) = server.query("SHOW MASTER STATUS")
    filler = fill(disk, 0)
    with pytest.raises(pymysql.MySQLError) as refused:
        server.query("FLUSH BINARY LOGS")
    assert refused.value.args[0] == 1016, refused.value
    assert server.query("SHOW MASTER STATUS")[0][0] == before[0]
    assert count(server) == acknowledged
    filler.unlink()
    acknowledged += insert_rows(server, 100, 20)
    assert acknowledged == 40
    assert server.query("SHOW MASTER STATUS")[0][0] == before[0]
    server.query("FLUSH BINARY LOGS")
    assert server.query("SHOW MASTER STATUS")[0][0] != before[0]
    names = [row[0] for row in server.query("SHOW BINARY LOGS")]
    on_disk = sorted(p.name for p in disk.glob("binlog.0*"))
    assert on_disk == sorted(names)  # the failed attempt left no file behind
    server.kill()
    server.start(timeout=120)
    assert count(server) == acknowledged
    server.stop(timeout=60)


def test_restart_after_a_disk_full_abort_needs_no_room_for_a_checkpoint(disk: Path) -> None:
    server = started(disk)
    acknowledged = insert_rows(server, 1, 3000)
    fill(disk, 0)
    acknowledged += insert_rows(server, 10_001, 1000)  # ends when the binlog cannot grow
    assert server.wait_exit(60) == 1  # binlog_error_action = ABORT_SERVER
    filler = disk / "filler"
    with filler.open("r+b") as f:  # room for a new binlog file, not for a checkpoint
        f.truncate(max(0, filler.stat().st_size - 256 * 1024))
    server.start(timeout=120)
    assert count(server) == acknowledged
    assert not (disk / "checkpoint.tmp").exists()
    server.stop(timeout=60)
