"""Distributed recovery through the ``group_replication_recovery`` channel: shown by SHOW
SLAVE STATUS and performance_schema while it runs, refused to users' START/STOP SLAVE,
purged after; the default channel ``''`` stays the users' (a member that is an
asynchronous replica keeps its channel through recovery). Real etcd members, real
servers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pymysql.cursors
import pytest

from rpl.core.testing.group import EtcdMembers, Group, wait_until
from rpl.core.testing.process import ServerProcess

RECOVERY = "group_replication_recovery"


@pytest.fixture
def group_size() -> int:
    return 2


@pytest.fixture
def outside_source(tmp_path: Path) -> Iterator[ServerProcess]:
    """A server outside the group (nothing written on it): an asynchronous source."""
    server = ServerProcess(tmp_path / "outside", options=["--server-id=9"]).start()
    yield server
    server.kill()


def status_rows(server: ServerProcess, channel: str | None = None) -> list[dict[str, Any]]:
    connection = server.connect(cursorclass=pymysql.cursors.DictCursor)
    try:
        with connection.cursor() as cursor:
            suffix = f" FOR CHANNEL '{channel}'" if channel is not None else ""
            cursor.execute("SHOW SLAVE STATUS" + suffix)
            return [dict(row) for row in cursor.fetchall()]
    finally:
        connection.close()


def _errno(server: ServerProcess, sql: str) -> int:
    with pytest.raises(pymysql.err.MySQLError) as failure:
        server.query(sql)
    return int(failure.value.args[0])


def test_recovery_channel_is_shown_while_it_runs_and_is_the_plugins(group: Group) -> None:
    group.bootstrap(0)
    group.wait_states(0, ["ONLINE"])
    donor, joiner = group.servers
    donor.query("CREATE DATABASE d")
    donor.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    donor.query("INSERT INTO d.t VALUES (1)")
    # the global read lock holds the recovery channel's applier: the channel stays to be seen
    holder = joiner.connect()
    holder.cursor().execute("FLUSH TABLES WITH READ LOCK")
    group.join(1)
    wait_until(
        lambda: (
            status_rows(joiner, RECOVERY)[0]["Retrieved_Gtid_Set"]
            == donor.query("SELECT @@gtid_executed")[0][0]
        ),
        60,
        lambda: f"the recovery channel to receive the donor's GTIDs: {status_rows(joiner)}",
    )
    (row,) = status_rows(joiner)  # the default channel is not configured: one row
    assert row["Channel_Name"] == RECOVERY
    assert row["Master_Port"] == donor.port
    assert row["Master_User"] == "root"
    assert row["Auto_Position"] == 1
    assert (row["Slave_IO_Running"], row["Slave_SQL_Running"]) == ("Yes", "Yes")
    assert row["Until_Condition"] == "SQL_AFTER_GTIDS"
    assert joiner.query(
        "SELECT CHANNEL_NAME, SERVICE_STATE FROM performance_schema.replication_connection_status"
    ) == [(RECOVERY, "ON")]
    assert list(joiner.datadir.glob(f"relay-bin-{RECOVERY}.0*"))
    assert (joiner.datadir / f"master-{RECOVERY}.info").exists()
    assert _errno(joiner, f"STOP SLAVE FOR CHANNEL '{RECOVERY}'") == 3139
    assert _errno(joiner, f"START SLAVE FOR CHANNEL '{RECOVERY}'") == 3139
    assert _errno(joiner, f"CHANGE MASTER TO MASTER_PORT=1 FOR CHANNEL '{RECOVERY}'") == 3139
    joiner.query("STOP SLAVE")  # every channel but Group Replication's: nothing to stop
    assert status_rows(joiner, RECOVERY)[0]["Slave_SQL_Running"] == "Yes"
    assert {r[1]: r[2] for r in group.members(0)}[joiner.port] == "RECOVERING"
    holder.cursor().execute("UNLOCK TABLES")
    holder.close()
    group.wait_states(1, ["ONLINE"] * 2)
    assert joiner.query("SELECT COUNT(*) FROM d.t") == [(1,)]
    assert status_rows(joiner) == [], "the recovery channel is purged"
    assert not list(joiner.datadir.glob(f"*{RECOVERY}*"))


def test_an_async_replica_member_recovers_through_its_own_channel(
    group: Group, outside_source: ServerProcess
) -> None:
    group.bootstrap(0)
    group.wait_states(0, ["ONLINE"])
    donor, joiner = group.servers
    donor.query("CREATE DATABASE d")
    donor.query("CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
    for i in range(50):
        donor.query(f"INSERT INTO d.t VALUES ({i}, {i})")
    # the joiner replicates asynchronously from a server outside the group ('')
    joiner.query(
        f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={outside_source.port}, "
        "MASTER_USER='root', MASTER_PASSWORD='', MASTER_AUTO_POSITION=1"
    )
    joiner.query("START SLAVE")
    wait_until(lambda: status_rows(joiner)[0]["Slave_IO_Running"] == "Yes", 30)
    group.join(1)
    group.wait_states(1, ["ONLINE"] * 2)
    wait_until(lambda: joiner.query("SELECT COUNT(*) FROM d.t") == [(50,)], 60)
    assert joiner.query("CHECKSUM TABLE d.t") == donor.query("CHECKSUM TABLE d.t")
    log = joiner.error_log()
    assert f"Replica SQL thread for channel '{RECOVERY}' initialized" in log
    assert f"Replica SQL thread for channel '{RECOVERY}' stopped because it reached UNTIL" in log
    assert "Terminating existing group replication donor connection" in log
    # the recovery channel is purged; the default channel is as the user left it
    (row,) = status_rows(joiner)
    assert row["Channel_Name"] == ""
    assert row["Master_Port"] == outside_source.port
    assert (row["Slave_IO_Running"], row["Slave_SQL_Running"]) == ("Yes", "Yes")
    assert _errno(joiner, f"SHOW SLAVE STATUS FOR CHANNEL '{RECOVERY}'") == 3074
    assert not list(joiner.datadir.glob(f"*{RECOVERY}*"))
    # and the member follows the group
    donor.query("INSERT INTO d.t VALUES (1000, 0)")
    wait_until(lambda: joiner.query("SELECT COUNT(*) FROM d.t") == [(51,)], 60)


def test_a_donor_that_refuses_the_joiner_is_left_for_another(
    tmp_path: Path, etcd: EtcdMembers
) -> None:
    """The member that sends the joiner its certification state has no account for the
    recovery user (made with sql_log_bin = 0 on the other member only): the first attempt
    fails, the second, on the other ONLINE member, recovers (MySQL's donor retries).
    """
    group = Group(tmp_path / "three", etcd, count=3).start_servers()
    try:
        group.bootstrap(0)
        group.join(1)
        group.wait_states(1, ["ONLINE"] * 2)
        first = group.servers[0]
        first.query("CREATE DATABASE d")
        first.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
        first.query("INSERT INTO d.t VALUES (1), (2), (3)")
        ids = {i: group.servers[i].query("SELECT @@server_uuid")[0][0] for i in (0, 1)}
        sender = min(ids, key=lambda i: ids[i])  # the lowest ONLINE member id sends the state
        other = group.servers[1 - sender]
        connection = other.connect()
        with connection.cursor() as cursor:  # as a DBA does it on a read-only secondary
            cursor.execute("SELECT @@super_read_only")
            (read_only,) = cursor.fetchone()
            cursor.execute("SET GLOBAL super_read_only = OFF")
            cursor.execute("SET sql_log_bin = 0")
            cursor.execute("CREATE USER 'rec'@'%' IDENTIFIED BY 'secret'")
            cursor.execute("GRANT REPLICATION SLAVE ON *.* TO 'rec'@'%'")
            cursor.execute(f"SET GLOBAL super_read_only = {int(read_only)}")
        connection.close()
        joiner = group.servers[2]
        group.configure(
            2,
            group_replication_recovery_user="rec",
            group_replication_recovery_password="secret",
            group_replication_recovery_reconnect_interval=1,
        )
        joiner.query("START GROUP_REPLICATION")
        group.wait_states(2, ["ONLINE"] * 3, timeout=120)
        assert joiner.query("SELECT id FROM d.t ORDER BY id") == [(1,), (2,), (3,)]
        log = joiner.error_log()
        assert "Attempt 1/10" in log and "Attempt 2/10" in log
        assert "Retrying with another donor" in log
    finally:
        group.stop()
