"""Named receiver channels (multi-source replication, MySQL 8.0): CHANGE MASTER ... FOR
CHANNEL, START/STOP/RESET SLAVE FOR CHANNEL, SHOW SLAVE STATUS per channel, START SLAVE
UNTIL SQL_AFTER_GTIDS, the channel's own relay log and info files, MySQL's errors, and
relay log recovery of a named channel after a SIGKILL. Real server processes, real
sockets.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymysql
import pymysql.cursors
import pytest
from conftest import ServerFactory, Writers
from test_async_replication import assert_same_data, binlog_gtids

from rpl.core.binlog.gtid import GtidSet
from rpl.core.binlog.logfile import BinlogIndex
from rpl.core.testing.process import ServerProcess
from rpl.core.testing.topology import (
    REPL_PASSWORD,
    REPL_USER,
    create_replication_user,
    gtid_executed,
    wait_for,
)

SECOND_USER = "repl2"
"""The second source's replication account (each source's account replicates too: two
sources creating the same account would conflict on the replica)."""


def channel_to(replica: ServerProcess, source: ServerProcess, channel: str, **extra: Any) -> None:
    """CHANGE MASTER TO ``source`` FOR CHANNEL ``channel`` (auto-positioned)."""
    options = ", ".join(f"{k}={v}" for k, v in extra.items())
    user = SECOND_USER if source.datadir.name == "source2" else REPL_USER
    replica.query(
        f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={source.port}, "
        f"MASTER_USER='{user}', MASTER_PASSWORD='{REPL_PASSWORD}', "
        f"MASTER_AUTO_POSITION=1{', ' + options if options else ''} FOR CHANNEL '{channel}'"
    )


def status_rows(server: ServerProcess, channel: str | None = None) -> list[dict[str, Any]]:
    """SHOW SLAVE STATUS [FOR CHANNEL], every row as a dict."""
    connection = server.connect(cursorclass=pymysql.cursors.DictCursor)
    try:
        with connection.cursor() as cursor:
            suffix = f" FOR CHANNEL '{channel}'" if channel is not None else ""
            cursor.execute("SHOW SLAVE STATUS" + suffix)
            return [dict(row) for row in cursor.fetchall()]
    finally:
        connection.close()


def errno_of(server: ServerProcess, sql: str) -> int:
    """The MySQL errno ``sql`` fails with (AssertionError if it succeeds)."""
    with pytest.raises(pymysql.MySQLError) as caught:
        server.query(sql)
    return int(caught.value.args[0])


def wait_applied(replica: ServerProcess, *sources: ServerProcess, timeout: float = 60) -> None:
    """Until the replica executed every GTID of the sources (no channel stopped on an error)."""
    target = GtidSet()
    for source in sources:
        target = target.union(GtidSet.parse(gtid_executed(source)))

    def done() -> bool:
        for row in status_rows(replica):
            assert not row["Last_SQL_Errno"], (row["Channel_Name"], row["Last_SQL_Error"])
        return target <= GtidSet.parse(gtid_executed(replica))

    wait_for(done, timeout, f"the replica to apply {target}", interval=0.1)


@pytest.fixture
def second_source(servers: ServerFactory) -> ServerProcess:
    """Another source, with its own database ``e`` (``e.t``)."""
    server = servers("source2")
    create_replication_user(server, SECOND_USER)
    server.query("CREATE DATABASE e")
    server.query("CREATE TABLE e.t (id INT PRIMARY KEY, v VARCHAR(40), n INT)")
    return server


def test_two_sources_into_one_replica_on_two_channels(
    servers: ServerFactory,
    source: ServerProcess,
    second_source: ServerProcess,
    writers: Callable[..., Writers],
) -> None:
    replica = servers("replica")
    channel_to(replica, source, "a")
    channel_to(replica, second_source, "b")
    replica.query("START SLAVE")  # without FOR CHANNEL: every channel
    load_a = writers(2).start(15)
    connection = second_source.connect()
    with connection.cursor() as cursor:
        for i in range(30):
            cursor.execute(f"INSERT INTO e.t VALUES ({i}, 'row {i}', {i})")
    connection.close()
    load_a.join()
    wait_applied(replica, source, second_source)
    assert replica.query("CHECKSUM TABLE d.t") == source.query("CHECKSUM TABLE d.t")
    assert replica.query("CHECKSUM TABLE e.t") == second_source.query("CHECKSUM TABLE e.t")
    assert replica.query("SELECT COUNT(*) FROM e.t") == [(30,)]
    duplicates = {g: n for g, n in binlog_gtids(replica).items() if n > 1}
    assert not duplicates

    rows = status_rows(replica)
    assert [r["Channel_Name"] for r in rows] == ["a", "b"]
    assert [r["Master_Port"] for r in rows] == [source.port, second_source.port]
    assert all(r["Slave_IO_Running"] == "Yes" and r["Slave_SQL_Running"] == "Yes" for r in rows)
    assert rows[0]["Retrieved_Gtid_Set"] == gtid_executed(source)
    assert rows[1]["Retrieved_Gtid_Set"] == gtid_executed(second_source)
    assert [r["Channel_Name"] for r in status_rows(replica, "b")] == ["b"]
    for table in ("replication_connection_status", "replication_applier_status"):
        names = replica.query(
            f"SELECT CHANNEL_NAME, SERVICE_STATE FROM performance_schema.{table} "
            "ORDER BY CHANNEL_NAME"
        )
        assert names == [("a", "ON"), ("b", "ON")], table
    received = dict(
        replica.query(
            "SELECT CHANNEL_NAME, RECEIVED_TRANSACTION_SET "
            "FROM performance_schema.replication_connection_status"
        )
    )
    assert received == {"a": gtid_executed(source), "b": gtid_executed(second_source)}

    datadir = replica.datadir
    for name in ("a", "b"):
        assert (datadir / f"master-{name}.info").exists()
        assert (datadir / f"relay-log-{name}.info").exists()
        files = BinlogIndex(datadir / f"relay-bin-{name}.index").names()
        assert files and all(f.startswith(f"relay-bin-{name}.") for f in files)
        assert (datadir / files[0]).exists()
    assert (
        not (datadir / "relay-bin.index").exists()
        or not BinlogIndex(datadir / "relay-bin.index").names()
    ), "the default channel's relay log holds nothing"

    # one channel stops, the other goes on
    replica.query("STOP SLAVE FOR CHANNEL 'a'")
    by_name = {r["Channel_Name"]: r for r in status_rows(replica)}
    assert (by_name["a"]["Slave_IO_Running"], by_name["a"]["Slave_SQL_Running"]) == ("No", "No")
    assert by_name["b"]["Slave_SQL_Running"] == "Yes"
    second_source.query("INSERT INTO e.t VALUES (100, 'late', 0)")
    source.query("INSERT INTO d.t VALUES (100000, 'late', 0)")
    wait_applied(replica, second_source)
    assert replica.query("SELECT COUNT(*) FROM d.t WHERE id = 100000") == [(0,)]

    # a restart starts every configured channel (as mysqld does), each from its own files
    replica.kill()
    replica.start()
    wait_for(
        lambda: [r["Slave_SQL_Running"] for r in status_rows(replica)] == ["Yes", "Yes"],
        30,
        "both channels to run",
    )
    wait_applied(replica, source, second_source)
    assert replica.query("SELECT COUNT(*) FROM d.t WHERE id = 100000") == [(1,)]

    # RESET SLAVE ALL FOR CHANNEL removes one channel and its files
    replica.query("STOP SLAVE FOR CHANNEL 'a'")
    replica.query("RESET SLAVE ALL FOR CHANNEL 'a'")
    assert [r["Channel_Name"] for r in status_rows(replica)] == ["b"]
    assert not (datadir / "master-a.info").exists()
    assert not (datadir / "relay-bin-a.index").exists()
    assert not list(datadir.glob("relay-bin-a.0*"))
    assert errno_of(replica, "SHOW SLAVE STATUS FOR CHANNEL 'a'") == 3074
    # the default channel always exists: with 'b' there are still two
    assert errno_of(replica, "SELECT MASTER_POS_WAIT('binlog.000001', 4, 1)") == 3079
    assert replica.query("SELECT MASTER_POS_WAIT('binlog.000001', 4, 1, 'b')") == [(0,)]
    replica.query("STOP SLAVE")
    replica.query("RESET SLAVE ALL")
    assert status_rows(replica) == []


def test_for_channel_errors_are_mysqls(
    servers: ServerFactory, source: ServerProcess, second_source: ServerProcess
) -> None:
    replica = servers("replica")
    assert errno_of(replica, "START SLAVE FOR CHANNEL 'nope'") == 3074
    assert errno_of(replica, "STOP SLAVE FOR CHANNEL 'nope'") == 3074
    assert errno_of(replica, "RESET SLAVE FOR CHANNEL 'nope'") == 3074
    assert errno_of(replica, "SHOW SLAVE STATUS FOR CHANNEL 'nope'") == 3074
    assert errno_of(replica, "SELECT MASTER_POS_WAIT('binlog.000001', 4, 1, 'nope')") == 3074
    long_name = "c" * 65
    assert errno_of(replica, f"CHANGE MASTER TO MASTER_HOST='h' FOR CHANNEL '{long_name}'") == 3072
    assert errno_of(replica, "CHANGE MASTER TO MASTER_HOST='h' FOR CHANNEL '../x'") == 3072
    # a bad option makes no channel
    assert errno_of(replica, "CHANGE MASTER TO MASTER_PORT=70000 FOR CHANNEL 'new'") == 1210
    assert errno_of(replica, "SHOW SLAVE STATUS FOR CHANNEL 'new'") == 3074
    assert not list(replica.datadir.glob("master-new*"))
    # Group Replication's names are the plugin's
    for verb in ("START", "STOP"):
        for name in ("group_replication_recovery", "group_replication_applier"):
            assert errno_of(replica, f"{verb} SLAVE FOR CHANNEL '{name}'") == 3139
    assert (
        errno_of(
            replica, "CHANGE MASTER TO MASTER_HOST='h' FOR CHANNEL 'group_replication_recovery'"
        )
        == 3139
    )
    assert (
        errno_of(
            replica, "CHANGE MASTER TO MASTER_USER='u' FOR CHANNEL 'group_replication_applier'"
        )
        == 3139
    )
    assert errno_of(replica, "SHOW SLAVE STATUS FOR CHANNEL 'group_replication_applier'") == 3139
    replica.query(
        "CHANGE MASTER TO MASTER_USER='u', MASTER_PASSWORD='p' FOR CHANNEL "
        "'group_replication_recovery'"
    )  # its credentials, as MySQL's manual has users set them

    # two channels: a statement that acts on one needs FOR CHANNEL
    channel_to(replica, source, "a")
    channel_to(replica, second_source, "B")  # names are case-insensitive
    assert [r["Channel_Name"] for r in status_rows(replica)] == ["a", "b"]
    assert errno_of(replica, "CHANGE MASTER TO MASTER_CONNECT_RETRY=5") == 3079
    assert errno_of(replica, "SELECT MASTER_POS_WAIT('binlog.000001', 4, 1)") == 3079
    assert errno_of(replica, f"START SLAVE UNTIL SQL_AFTER_GTIDS='{gtid_executed(source)}'") == 3079
    assert errno_of(replica, "START SLAVE UNTIL SQL_AFTER_GTIDS='x:y' FOR CHANNEL 'a'") == 1772
    assert errno_of(replica, "START SLAVE UNTIL MASTER_LOG_POS=4 FOR CHANNEL 'a'") == 1235
    replica.query("CHANGE MASTER TO MASTER_CONNECT_RETRY=5 FOR CHANNEL 'A'")
    assert status_rows(replica, "a")[0]["Connect_Retry"] == 5
    replica.query("START SLAVE FOR CHANNEL 'a'")
    assert errno_of(replica, "CHANGE MASTER TO MASTER_PORT=1 FOR CHANNEL 'a'") == 3021
    assert errno_of(replica, "RESET SLAVE") == 1198, "RESET SLAVE acts on every channel"
    assert errno_of(replica, "RESET SLAVE FOR CHANNEL 'a'") == 1198
    replica.query("RESET SLAVE FOR CHANNEL 'b'")  # the stopped one may be reset
    replica.query("STOP SLAVE")
    replica.query("RESET SLAVE ALL")
    assert status_rows(replica) == []
    assert not list(replica.datadir.glob("master-*.info"))


def test_until_sql_after_gtids_stops_right_after_them(
    servers: ServerFactory, source: ServerProcess
) -> None:
    for i in range(10):
        source.query(f"INSERT INTO d.t VALUES ({i}, 'row {i}', {i})")
    executed = GtidSet.parse(gtid_executed(source))
    (sid,) = executed.sids()
    last = executed.last_gno(sid)
    until = f"{sid}:1-{last - 4}"
    replica = servers("replica")
    channel_to(replica, source, "c")
    replica.query(f"START SLAVE UNTIL SQL_AFTER_GTIDS = '{until}' FOR CHANNEL 'c'")
    wait_for(
        lambda: status_rows(replica, "c")[0]["Slave_SQL_Running"] == "No",
        30,
        "the applier to stop at its UNTIL condition",
    )
    row = status_rows(replica, "c")[0]
    assert gtid_executed(replica) == until, "applied exactly the UNTIL set"
    assert row["Last_SQL_Errno"] == 0
    assert row["Slave_IO_Running"] == "Yes", "the receiver goes on"
    wait_for(
        lambda: status_rows(replica, "c")[0]["Retrieved_Gtid_Set"] == str(executed),
        30,
        "the receiver to fetch everything",
    )
    assert gtid_executed(replica) == until, "nothing past the UNTIL set"
    assert replica.query("SELECT COUNT(*) FROM d.t") == [(10 - 4,)]
    assert "reached UNTIL SQL_AFTER_GTIDS" in replica.error_log()
    # already executed: the applier stops at once
    replica.query(f"START SLAVE SQL_THREAD UNTIL SQL_AFTER_GTIDS = '{sid}:1' FOR CHANNEL 'c'")
    wait_for(lambda: status_rows(replica, "c")[0]["Slave_SQL_Running"] == "No", 30, "a stop")
    assert gtid_executed(replica) == until
    replica.query("START SLAVE SQL_THREAD FOR CHANNEL 'c'")
    wait_applied(replica, source)
    assert replica.query("CHECKSUM TABLE d.t") == source.query("CHECKSUM TABLE d.t")
    # the default channel takes UNTIL too while it is the only one
    replica.query("STOP SLAVE")
    replica.query("RESET SLAVE ALL")
    other = servers("replica2")
    other.query(
        f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={source.port}, "
        f"MASTER_USER='{REPL_USER}', MASTER_PASSWORD='{REPL_PASSWORD}', MASTER_AUTO_POSITION=1"
    )
    other.query(f"START SLAVE UNTIL SQL_AFTER_GTIDS = '{sid}:1-3'")
    wait_for(lambda: status_rows(other)[0]["Slave_SQL_Running"] == "No", 30, "a stop")
    assert gtid_executed(other) == f"{sid}:1-3"


@pytest.mark.parametrize("cut", [0, 40])
def test_sigkill_mid_stream_on_a_named_channel_loses_nothing_applies_nothing_twice(
    servers: ServerFactory, source: ServerProcess, writers: Callable[..., Writers], cut: int
) -> None:
    """SIGKILL the replica while a named channel receives and applies under load (its
    master.info synced after every transaction, so it may be ahead of the relay log); then
    cut ``cut`` bytes off the channel's newest relay log file (an OS crash losing the
    unsynced tail). At restart the channel's relay log is recovered: the channel resumes by
    itself and ends with exactly the source's transactions, each once.
    """
    replica = servers("replica", "--sync-source-info=1")
    channel_to(replica, source, "c")
    replica.query("START SLAVE FOR CHANNEL 'c'")
    load = writers(3).start()
    wait_for(
        lambda: GtidSet.parse(gtid_executed(replica)).count() > 40,
        60,
        "the channel to apply part of the load",
    )
    replica.kill()
    index = replica.datadir / "relay-bin-c.index"
    newest: Path = replica.datadir / BinlogIndex(index).names()[-1]
    if cut:
        size = newest.stat().st_size
        with open(newest, "r+b") as f:
            f.truncate(max(0, size - cut))
    replica.start()
    load.join()
    assert_same_data(source, replica)
    assert [r["Channel_Name"] for r in status_rows(replica)] == ["c"]
    log = replica.error_log()
    assert "Relay log recovery: the receiver restarts at source log" in log
    if cut:
        assert "Truncating relay log" in log
