"""A data directory that turns read-only under a running server (its file system's
answer to an I/O error): the data directory is a passthrough FUSE mount
(``switchable_fs.py``) that starts refusing every change with EROFS while files are open.

What must hold: the commit that cannot be written gets MySQL's
ER_BINLOG_LOGGING_IMPOSSIBLE (1598) and the server stops (binlog_error_action =
ABORT_SERVER), not hanging and acknowledging nothing more; once the file system is
writable again a restart recovers every acknowledged row and no other.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pymysql
import pytest

from rpl.core.testing.process import ServerProcess

HERE = Path(__file__).resolve().parent


class Switchable(NamedTuple):
    mount: Path
    flag: Path

    def read_only(self) -> None:
        self.flag.touch()

    def writable(self) -> None:
        self.flag.unlink(missing_ok=True)


@pytest.fixture
def datadir(tmp_path: Path) -> Iterator[Switchable]:
    """A FUSE passthrough of ``tmp_path/backing`` at ``tmp_path/data``."""
    backing, mount, flag = tmp_path / "backing", tmp_path / "data", tmp_path / "read-only"
    backing.mkdir()
    mount.mkdir()
    process = subprocess.Popen(
        [sys.executable, str(HERE / "switchable_fs.py"), str(backing), str(mount), str(flag)],
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "fuse.log").open("wb"),
    )
    try:
        deadline = time.monotonic() + 20
        while not os.path.ismount(mount):
            assert process.poll() is None, (tmp_path / "fuse.log").read_text()
            assert time.monotonic() < deadline, "the FUSE mount did not come up"
            time.sleep(0.05)
        yield Switchable(mount, flag)
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False, capture_output=True)
        process.terminate()
        process.wait(10)


def insert(server: ServerProcess, first: int, count: int) -> tuple[int, int | None]:
    """Rows acknowledged of ``count`` inserts, one a statement, and the error that ended
    them (None if none did)."""
    done = 0
    try:
        connection = server.connect()
    except pymysql.MySQLError as error:
        return 0, int(error.args[0])
    try:
        with connection.cursor() as cursor:
            for i in range(first, first + count):
                cursor.execute("INSERT INTO d.t VALUES (%s, %s)", (i, f"row {i}"))
                done += 1
    except pymysql.MySQLError as error:
        return done, int(error.args[0])
    finally:
        connection.close()
    return done, None


def test_a_datadir_that_turns_read_only_stops_the_server_and_loses_nothing(
    datadir: Switchable,
) -> None:
    server = ServerProcess(datadir.mount, options=["--rpl-checkpoint-binlog-bytes=0"]).start()
    server.query("CREATE DATABASE d")
    server.query("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(40))")
    acknowledged, error = insert(server, 1, 200)
    assert (acknowledged, error) == (200, None)

    datadir.read_only()
    more, error = insert(server, 1000, 50)
    assert more == 0, "nothing is acknowledged once the binlog cannot be written"
    assert error in (1598, 2013), error  # ER_BINLOG_LOGGING_IMPOSSIBLE, or the exit first
    assert server.wait_exit(60) == 1  # binlog_error_action = ABORT_SERVER

    datadir.writable()
    server.start(timeout=120)
    assert server.query("SELECT COUNT(*), MIN(id), MAX(id) FROM d.t") == [(200, 1, 200)]
    more, error = insert(server, 1000, 10)
    assert (more, error) == (10, None), "the server writes again once the disk does"
    server.stop(timeout=60)
