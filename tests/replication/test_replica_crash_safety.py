"""A replica killed at any of the named crash points (WL#4621, MySQL's applier point names)
while its source is under concurrent writers restarts and reaches exactly the source's
state; damage recovery cannot repair stops the applier with an error naming the file and
position, and RESET SLAVE + START SLAVE then fetches again without loss.

How "nothing applied twice" is proven: the binlog logs row images, so a second
application of an UPDATE would not change the data; instead every GTID must appear once
in the replica's own binlog (``assert_same_data``), and every writer transaction inserts
a fresh primary key, so applying one twice fails with 1062 and stops the applier, which
``wait_caught_up`` reports.

``RPL_FAULT_TRIALS`` (default 3) sets the trials per crash point and mode; the ``faults`` tox
environment runs many.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import pytest
from conftest import ServerFactory, Writers
from test_async_replication import assert_same_data

from rpl.core.binlog.events import GTID_LOG_EVENT, QUERY_EVENT, ROTATE_EVENT, XID_EVENT
from rpl.core.binlog.logfile import BinlogIndex, LogError, read_events
from rpl.core.debug import APPLIER_CRASH_POINTS, RECEIVER_CRASH_POINTS
from rpl.core.testing.process import ServerProcess
from rpl.core.testing.topology import gtid_executed, replicate, slave_status, wait_for
from rpl.core.validate.stitch import violations_in

TRIALS = int(os.environ.get("RPL_FAULT_TRIALS", "3"))
SIGKILLED = -9


def relay_files(replica: ServerProcess) -> list[str]:
    """The relay log files the index lists."""
    return BinlogIndex(replica.datadir / "relay-bin.index").names()


@pytest.mark.parametrize("trial", range(TRIALS))
@pytest.mark.parametrize("auto_position", [True, False], ids=["gtid", "position"])
@pytest.mark.parametrize("point", APPLIER_CRASH_POINTS + RECEIVER_CRASH_POINTS)
def test_crash_point_under_load(
    servers: ServerFactory,
    source: ServerProcess,
    writers: Callable[..., Writers],
    point: str,
    auto_position: bool,
    trial: int,
) -> None:
    replica = servers("replica", "--sync-source-info=1", "--sync-relay-log-info=1")
    replicate(replica, source, auto_position=auto_position)
    load = writers(3).start()
    time.sleep(0.3 + 0.2 * trial)
    replica.arm_crash_point(point)
    assert replica.wait_exit(30) == SIGKILLED, f"{point} was not reached"
    replica.start()
    time.sleep(0.5)
    load.join()
    assert_same_data(source, replica)
    assert violations_in([str(source.datadir), str(replica.datadir)]) == []
    log = replica.error_log()
    assert "Relay log recovery: the receiver restarts at source log" in log
    if point == "crash_in_relay_log_event_write":
        assert "Truncating relay log" in log, "the half-written event was cut off"


def _receive_only(
    replica: ServerProcess,
    source: ServerProcess,
    writers: Callable[..., Writers],
    auto_position: bool,
) -> None:
    """Relay a load the applier does not apply; then SIGKILL the replica."""
    replicate(replica, source, auto_position=auto_position)
    replica.query("STOP SLAVE SQL_THREAD")
    writers(3).start(25).join()
    wait_for(
        lambda: slave_status(replica)["Retrieved_Gtid_Set"] == gtid_executed(source),
        30,
        "the receiver to fetch everything",
    )
    replica.kill()


def _flip_middle_event(path: str) -> int:
    """Flip a byte in the body of a QUERY event about halfway through ``path``; its offset."""
    queries = [
        e for e in read_events(path, check_log_pos=False) if e.header.type_code == QUERY_EVENT
    ]
    assert len(queries) > 4, "a relay log with transactions"
    victim = queries[len(queries) // 2]
    with open(path, "r+b") as f:
        f.seek(victim.position + 30)
        byte = f.read(1)
        f.seek(victim.position + 30)
        f.write(bytes((byte[0] ^ 0x01,)))
    return victim.position


def _applier_error(replica: ServerProcess) -> tuple[int, str]:
    wait_for(lambda: slave_status(replica)["Last_SQL_Errno"] != 0, 30, "the applier to stop")
    status = slave_status(replica)
    return int(status["Last_SQL_Errno"]), str(status["Last_SQL_Error"])


def _reset_and_refetch(replica: ServerProcess, source: ServerProcess) -> None:
    replica.query("STOP SLAVE")
    replica.query("RESET SLAVE")
    replica.query("START SLAVE")
    assert_same_data(source, replica)


@pytest.mark.parametrize("where", ["last", "older"])
@pytest.mark.parametrize("auto_position", [True, False], ids=["gtid", "position"])
def test_damage_in_the_middle_is_reported_not_skipped(
    servers: ServerFactory,
    source: ServerProcess,
    writers: Callable[..., Writers],
    auto_position: bool,
    where: str,
) -> None:
    replica = servers("replica", *(["--max-relay-log-size=8192"] if where == "older" else []))
    _receive_only(replica, source, writers, auto_position)
    names = relay_files(replica)
    assert len(names) >= (3 if where == "older" else 1)
    victim = names[-1] if where == "last" else names[len(names) // 2]
    path = str(replica.datadir / victim)
    size = os.path.getsize(path)
    offset = _flip_middle_event(path)
    replica.start()
    errno, message = _applier_error(replica)
    assert errno == 1594
    assert f"relay log '{victim}' position {offset}" in message, message
    assert os.path.getsize(path) == size, "recovery did not cut complete events away"
    if where == "last":
        assert f"Relay log {victim} is damaged at position {offset}" in replica.error_log()
    applied = gtid_executed(replica)
    assert applied != gtid_executed(source), "nothing after the damage was applied"
    _reset_and_refetch(replica, source)


@pytest.mark.parametrize("auto_position", [True, False], ids=["gtid", "position"])
def test_relay_file_missing_from_the_middle_of_the_index(
    servers: ServerFactory,
    source: ServerProcess,
    writers: Callable[..., Writers],
    auto_position: bool,
) -> None:
    replica = servers("replica", "--max-relay-log-size=8192")
    _receive_only(replica, source, writers, auto_position)
    names = relay_files(replica)
    assert len(names) >= 3
    missing = names[len(names) // 2]
    (replica.datadir / missing).unlink()
    replica.start()
    errno, message = _applier_error(replica)
    assert errno == 1594
    assert f"relay log '{missing}' listed in the index is missing" in message, message
    assert f"Relay log files not yet applied are missing: ['{missing}']" in replica.error_log()
    _reset_and_refetch(replica, source)


def test_missing_tail_files_are_fetched_again(
    servers: ServerFactory, source: ServerProcess, writers: Callable[..., Writers]
) -> None:
    replica = servers("replica", "--max-relay-log-size=8192")
    _receive_only(replica, source, writers, auto_position=False)
    names = relay_files(replica)
    for name in names[-2:]:
        (replica.datadir / name).unlink()
    replica.start()
    assert_same_data(source, replica)
    assert "Relay log files missing from the index were dropped from it" in replica.error_log()


def _spans(path: str) -> bool:
    """Whether ``path`` ends (before its closing ROTATE) inside a transaction."""
    inside = False
    try:
        for entry in read_events(path, check_log_pos=False):
            code = entry.header.type_code
            if code == GTID_LOG_EVENT:
                inside = True
            elif code == XID_EVENT:
                inside = False
            elif code == ROTATE_EVENT and entry.header.server_id == 2 and inside:
                return True
    except LogError:
        return False
    return False


def test_transaction_split_across_two_relay_files_is_applied_whole(
    servers: ServerFactory, source: ServerProcess
) -> None:
    """The receiver stops inside a long transaction (the ``stop_io_inside_transaction``
    fault point: a STOP SLAVE IO_THREAD after its first statement): its first part
    ends one relay file, the whole of it is fetched again into the next. After a SIGKILL
    and a restart the applier discards the part and applies the whole, once."""
    source.query("INSERT INTO d.t VALUES " + ",".join(f"({i}, 'r', 0)" for i in range(1, 201)))
    replica = servers("replica")
    replicate(replica, source, auto_position=False)
    wait_for(lambda: gtid_executed(replica) == gtid_executed(source), 30, "the initial rows")
    replica.query("STOP SLAVE SQL_THREAD")
    stop = threading.Event()

    def long_transactions() -> None:
        connection = source.connect()
        with connection.cursor() as cursor:
            while not stop.is_set():
                cursor.execute("BEGIN")
                for i in range(1, 201):
                    cursor.execute(f"UPDATE d.t SET n = n + 1 WHERE id = {i}")
                cursor.execute("COMMIT")
        connection.close()

    thread = threading.Thread(target=long_transactions, daemon=True)
    thread.start()
    try:
        time.sleep(0.2)
        replica.query("SET GLOBAL debug = '+d,stop_io_inside_transaction'")
        wait_for(
            lambda: slave_status(replica)["Slave_IO_Running"] == "No",
            30,
            "the receiver to stop inside a transaction",
        )
        assert _spans(str(replica.datadir / relay_files(replica)[-1])), (
            "the relay file the stop closed ends inside a transaction"
        )
        replica.query("START SLAVE IO_THREAD")
        time.sleep(0.3)
    finally:
        stop.set()
        thread.join(30)
    wait_for(
        lambda: slave_status(replica)["Retrieved_Gtid_Set"] == gtid_executed(source),
        30,
        "the receiver to fetch everything",
    )
    replica.kill()
    replica.start()
    assert_same_data(source, replica)
    assert replica.query("SELECT COUNT(DISTINCT n) FROM d.t") == [(1,)], (
        "every long transaction applied whole: all rows have the same count"
    )
