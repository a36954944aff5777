"""A dump thread sends a group only once the group is synced (``sync_binlog=1``).

The binlog writer publishes a group's end after its ``fdatasync`` and the dump threads
send nothing past the published end (rpl.core.binlog.writer, rpl.core.replication.sender):
otherwise a replica could hold a transaction that a crash of the source's machine loses,
and the source, restarted, would no longer be the replica's ancestor.
"""

from __future__ import annotations

import threading
import time

from conftest import ServerFactory

from rpl.core.binlog.gtid import GtidSet
from rpl.core.replication.sender import STATE_IDLE
from rpl.core.testing.process import ServerProcess
from rpl.core.testing.topology import (
    gtid_executed,
    replicate,
    slave_status,
    wait_caught_up,
    wait_for,
)


def dump_state(source: ServerProcess) -> str:
    """The State of the source's Binlog Dump thread in SHOW PROCESSLIST."""
    for row in source.query("SHOW PROCESSLIST"):
        if str(row[4]).startswith("Binlog Dump"):
            return str(row[6])
    return ""


def binlog_size(source: ServerProcess) -> int:
    """The size of the binlog file being written."""
    name = source.query("SHOW MASTER STATUS")[0][0]
    return (source.datadir / str(name)).stat().st_size


def retrieved(replica: ServerProcess) -> str:
    """The replica's Retrieved_Gtid_Set, normalised."""
    return str(GtidSet.parse(slave_status(replica)["Retrieved_Gtid_Set"] or ""))


def test_a_written_group_is_not_sent_before_its_sync(
    servers: ServerFactory, source: ServerProcess
) -> None:
    replica = servers("replica")
    replicate(replica, source)
    source.query("INSERT INTO d.t VALUES (1, 'a', 1)")
    before = str(GtidSet.parse(wait_caught_up(source, replica)))
    wait_for(lambda: dump_state(source) == STATE_IDLE, 20, "the dump to wait for updates")

    size = binlog_size(source)
    source.query("SET GLOBAL debug = '+d,pause_before_sync_binlog'")
    insert = threading.Thread(target=source.query, args=("INSERT INTO d.t VALUES (2, 'b', 2)",))
    insert.start()
    try:
        wait_for(
            lambda: binlog_size(source) > size,
            20,
            "the group to be written (its leader now waits before the sync)",
        )
        assert int(source.query("SHOW MASTER STATUS")[0][1]) == size, "not published"
        for _ in range(10):  # written, not synced: nothing of it reaches the replica
            assert retrieved(replica) == before
            assert dump_state(source) == STATE_IDLE
            time.sleep(0.05)
    finally:
        source.query("SET GLOBAL debug = '-d,pause_before_sync_binlog'")
    insert.join(20)
    assert not insert.is_alive()
    after = wait_caught_up(source, replica)
    assert retrieved(replica) == str(GtidSet.parse(after)) != before
    assert gtid_executed(replica) == gtid_executed(source)
    assert replica.query("SELECT id FROM d.t ORDER BY id") == [(1,), (2,)]
