"""Crash safety: kill -9 at each crash point under concurrent writers, then restart.

What must hold after the restart (docs/server.md, "Durability and recovery"):
* every transaction a client got OK for is there;
* the data equals exactly the transactions whose events are in the binlog (after
  recovery cut off any partial tail): nothing more, nothing less.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pymysql
import pytest

from rpl.core.debug import CRASH_POINTS
from rpl.core.testing.binlogs import logged_row_changes
from rpl.core.testing.process import ServerProcess
from rpl.core.validate.stitch import violations_in

WRITERS = 4


def binlog_ids(datadir: Path) -> set[int]:
    """Ids of rows the binlog's rows events leave in c.t (inserts minus deletes)."""
    ids: set[int] = set()
    for kind, before, after in logged_row_changes(datadir, "c", "t"):
        if kind == "insert" and after is not None:
            ids.add(int(after[0]))  # type: ignore[arg-type]
        elif kind == "delete" and before is not None:
            ids.discard(int(before[0]))  # type: ignore[arg-type]
    return ids


def run_writers(
    server: ServerProcess, stop: threading.Event, acked: list[set[int]]
) -> list[threading.Thread]:
    def write(n: int) -> None:
        try:
            connection = server.connect()
            cursor = connection.cursor()
            i = 0
            while not stop.is_set():
                key = n * 1_000_000 + i
                if i % 3 == 2:
                    cursor.execute("BEGIN")
                    cursor.execute(f"INSERT INTO c.t VALUES ({key}, {n})")
                    cursor.execute(f"INSERT INTO c.t VALUES ({key + 500_000}, {n})")
                    cursor.execute("COMMIT")
                    acked[n].update((key, key + 500_000))
                else:
                    cursor.execute(f"INSERT INTO c.t VALUES ({key}, {n})")
                    acked[n].add(key)
                i += 1
        except pymysql.MySQLError:
            return

    threads = [threading.Thread(target=write, args=(n,), daemon=True) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    return threads


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_kill_at_crash_point_under_writers(tmp_path: Path, point: str) -> None:
    server = ServerProcess(tmp_path / "data").start()
    server.query("CREATE DATABASE c")
    server.query("CREATE TABLE c.t (id BIGINT NOT NULL PRIMARY KEY, w INT NOT NULL)")
    stop = threading.Event()
    acked: list[set[int]] = [set() for _ in range(WRITERS)]
    threads = run_writers(server, stop, acked)
    time.sleep(0.5)
    server.arm_crash_point(point)
    code = server.wait_exit(30)
    stop.set()
    for thread in threads:
        thread.join(10)
    assert code == -9, f"the server was not killed at {point} (exit {code})"
    everything_acked = set().union(*acked)
    assert everything_acked, "no transaction committed before the crash"

    server.start()
    rows = {row[0] for row in server.query("SELECT id FROM c.t")}
    lost = sorted(everything_acked - rows)[:5]
    assert everything_acked <= rows, f"lost acknowledged rows: {lost}"
    in_binlog = binlog_ids(tmp_path / "data")
    assert rows == in_binlog, (
        f"data differs from the binlog: extra {sorted(rows - in_binlog)[:5]}"
        f", missing {sorted(in_binlog - rows)[:5]}"
    )
    assert violations_in([str(tmp_path / "data")]) == []
    pairs = {r for r in rows if r % 1_000_000 >= 500_000}
    assert all(p - 500_000 in rows for p in pairs), "half of a transaction survived"
    if point == "half_binlogged_transaction":
        assert "Truncating binlog" in server.error_log()
    # The recovered server keeps working and survives a clean restart.
    server.query("INSERT INTO c.t VALUES (999999999, 0)")
    assert server.stop() == 0
    server.start()
    assert server.query("SELECT COUNT(*) FROM c.t") == [(len(rows) + 1,)]
    server.stop()


def test_clean_restart_keeps_everything(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data").start()
    server.query("CREATE DATABASE k")
    server.query("CREATE TABLE k.t (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, v CHAR(10))")
    server.query("INSERT INTO k.t (v) VALUES ('a'), ('b')")
    server.query("CREATE USER 'u1'@'%' IDENTIFIED BY 'pw1'")
    gtids = server.query("SELECT @@gtid_executed")[0][0]
    checksum = server.query("CHECKSUM TABLE k.t")
    assert server.stop() == 0
    assert "Shutdown complete" in server.error_log()
    server.start()
    assert server.query("SELECT id, v FROM k.t") == [(1, "a"), (2, "b")]
    assert server.query("CHECKSUM TABLE k.t") == checksum
    assert server.query("SELECT @@gtid_executed")[0][0] == gtids
    server.query("INSERT INTO k.t (v) VALUES ('c')")
    assert server.query("SELECT MAX(id) FROM k.t") == [(3,)]
    server.connect(user="u1", password="pw1").close()
    events = server.query("SHOW BINLOG EVENTS IN 'binlog.000001'")
    assert events[-1][2] == "Stop", "a clean shutdown ends the binlog with a STOP event"
    server.stop()


def test_recovery_replays_after_checkpoint_and_rotation(tmp_path: Path) -> None:
    """Checkpoint at a rotation, more commits, kill -9: replay from the checkpoint."""
    server = ServerProcess(tmp_path / "data").start()
    server.query("CREATE DATABASE r")
    server.query("CREATE TABLE r.t (id INT NOT NULL PRIMARY KEY, v INT)")
    server.query("INSERT INTO r.t VALUES (1, 1), (2, 2)")
    server.query("FLUSH BINARY LOGS")
    server.query("UPDATE r.t SET v = 20 WHERE id = 2")
    server.query("DELETE FROM r.t WHERE id = 1")
    server.query("INSERT INTO r.t VALUES (3, 3)")
    server.kill()
    server.start()
    assert server.query("SELECT id, v FROM r.t") == [(2, 20), (3, 3)]
    server.stop()


def test_damaged_closed_binlog_stops_the_start(tmp_path: Path) -> None:
    """A bad event in a file that was closed cleanly is no crash artefact: refuse to start."""
    server = ServerProcess(tmp_path / "data").start()
    server.query("CREATE DATABASE d")
    server.query("CREATE TABLE d.t (id INT NOT NULL PRIMARY KEY)")
    server.query("INSERT INTO d.t VALUES (1)")
    server.query("FLUSH BINARY LOGS")
    server.query("INSERT INTO d.t VALUES (2)")
    server.kill()
    (tmp_path / "data" / "checkpoint").unlink()  # recovery must read binlog.000001
    first = tmp_path / "data" / "binlog.000001"
    data = bytearray(first.read_bytes())
    data[200] ^= 0xFF
    first.write_bytes(bytes(data))
    with pytest.raises(RuntimeError) as info:
        server.start(timeout=20)
    assert "binlog.000001" in str(info.value)


def test_a_second_server_on_a_live_data_directory_is_refused(tmp_path: Path) -> None:
    """Two servers on one data directory would each replay, truncate and append to the
    same binlog: the second refuses to start, as mysqld does, and the first loses
    nothing. After the first is killed (-9), the lock is gone with it."""
    first = ServerProcess(tmp_path / "data").start()
    first.query("CREATE DATABASE d")
    first.query("CREATE TABLE d.t (id INT NOT NULL PRIMARY KEY)")
    first.query("INSERT INTO d.t VALUES (1)")
    size = (tmp_path / "data" / "binlog.000001").stat().st_size
    second = ServerProcess(tmp_path / "data")
    with pytest.raises(RuntimeError) as info:
        second.start(timeout=20)
    assert re.search(
        r"\[ERROR\] \[MY-012574\] \[Server\] Unable to lock ./rpl.lock error: 11", str(info.value)
    ), info.value
    assert (tmp_path / "data" / "binlog.000001").stat().st_size == size
    first.query("INSERT INTO d.t VALUES (2)")
    assert first.query("SELECT id FROM d.t") == [(1,), (2,)]
    first.kill()
    second.start()
    assert second.query("SELECT id FROM d.t") == [(1,), (2,)]
    second.stop()


@pytest.mark.parametrize("every", [0, 65536])
def test_checkpoints_between_rotations_bound_the_replay(tmp_path: Path, every: int) -> None:
    """rpl_checkpoint_binlog_bytes: the engine is checkpointed each time that much binlog
    has grown, so a kill -9 replays at most about that much, not the whole file (0: only
    rotations checkpoint, and the restart replays everything since the start)."""
    server = ServerProcess(
        tmp_path / "data", options=[f"--rpl-checkpoint-binlog-bytes={every}"]
    ).start()
    server.query("CREATE DATABASE c")
    server.query("CREATE TABLE c.t (id INT NOT NULL PRIMARY KEY, v VARCHAR(2000))")
    for key in range(200):
        server.query(f"INSERT INTO c.t VALUES ({key}, '{'x' * 1000}')")
    time.sleep(1)  # the checkpoint thread catches up
    assert server.query("SHOW BINARY LOGS")[-1][0] == "binlog.000001", "no rotation"
    server.kill()
    server.start()
    assert server.query("SELECT COUNT(*) FROM c.t") == [(200,)]
    replays = re.findall(r"Crash recovery finished: (\d+) transaction", server.error_log())
    replayed = int(replays[-1]) if replays else 0
    if every:
        assert 0 < replayed <= 2 * (every // 1000), replayed
    else:
        assert replayed == 202
    server.stop()


def test_binlog_write_error_aborts_the_server(tmp_path: Path) -> None:
    """binlog_error_action = ABORT_SERVER: a failed binlog write (a full disk) gets its
    client ER_BINLOG_LOGGING_IMPOSSIBLE and stops the server; the transaction is not
    committed, everything acknowledged before survives the restart, and nothing hangs."""
    server = ServerProcess(tmp_path / "data").start()
    server.query("CREATE DATABASE c")
    server.query("CREATE TABLE c.t (id BIGINT NOT NULL PRIMARY KEY, w INT NOT NULL)")
    server.query("INSERT INTO c.t VALUES (1, 0)")
    server.arm_crash_point("binlog_write_error")
    connection = server.connect(read_timeout=20)
    with pytest.raises(pymysql.MySQLError) as failed:
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO c.t VALUES (2, 0)")
    assert failed.value.args[0] == 1598, failed.value
    assert "ABORT_SERVER" in failed.value.args[1]
    assert server.wait_exit(30) == 1
    assert "Binary logging not possible" in server.error_log()
    server.start()
    assert server.query("SELECT id FROM c.t") == [(1,)]
    assert binlog_ids(tmp_path / "data") == {1}
    server.query("INSERT INTO c.t VALUES (3, 0)")
    assert server.query("SELECT id FROM c.t") == [(1,), (3,)]
    server.stop()


def test_a_new_data_directory_and_its_error_log_are_not_world_readable(tmp_path: Path) -> None:
    """mysqld --initialize leaves the data directory 0750 and the error log 0640."""
    server = ServerProcess(tmp_path / "data").start()
    server.stop()
    assert (tmp_path / "data").stat().st_mode & 0o777 == 0o750
    assert (tmp_path / "data" / "error.log").stat().st_mode & 0o777 == 0o640
