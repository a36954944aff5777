"""Majority loss on real etcd members and real servers: the survivor sees the others
UNREACHABLE and its writes block; group_replication_force_members (after its etcd
member is re-formed alone) unblocks them with nothing lost or committed twice;
group_replication_unreachable_majority_timeout sends a minority to ERROR and rolls its
blocked writes back; bad force_members values get MySQL's errors.

A member here is a server and its etcd member: "killing a member" kills both, as
killing mysqld kills its XCom.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

from rpl.core.binlog.events import GtidEvent
from rpl.core.testing.binlogs import binlog_entries
from rpl.core.testing.group import GROUP_NAME, EtcdMembers, Group, wait_until

HOOK_ERROR = "Error on observer while running replication hook 'before_commit'."
BLOCKED = "This server is not able to reach a majority of members in the group."


def _etcd(tmp_path: Path, count: int) -> Iterator[EtcdMembers]:
    members = EtcdMembers(tmp_path / "etcd", count).start()
    yield members
    members.stop()


def _group(tmp_path: Path, etcd: EtcdMembers, count: int) -> Iterator[Group]:
    made = Group(tmp_path, etcd, count).start_servers()
    yield made
    made.stop()


@pytest.fixture
def etcd3(tmp_path: Path) -> Iterator[EtcdMembers]:
    yield from _etcd(tmp_path, 3)


@pytest.fixture
def group3(tmp_path: Path, etcd3: EtcdMembers) -> Iterator[Group]:
    yield from _group(tmp_path, etcd3, 3)


@pytest.fixture
def etcd2(tmp_path: Path) -> Iterator[EtcdMembers]:
    yield from _etcd(tmp_path, 2)


@pytest.fixture
def group2(tmp_path: Path, etcd2: EtcdMembers) -> Iterator[Group]:
    yield from _group(tmp_path, etcd2, 2)


@pytest.fixture
def etcd1(tmp_path: Path) -> Iterator[EtcdMembers]:
    yield from _etcd(tmp_path, 1)


@pytest.fixture
def group1(tmp_path: Path, etcd1: EtcdMembers) -> Iterator[Group]:
    yield from _group(tmp_path, etcd1, 1)


class Writer(threading.Thread):
    """One statement on its own connection, in the background: its outcome."""

    def __init__(self, server: Any, sql: str) -> None:
        super().__init__(daemon=True)
        self.server, self.sql = server, sql
        self.done = threading.Event()
        self.error: tuple[int, str] | None = None

    def run(self) -> None:
        try:
            self.server.query(self.sql)
        except pymysql.err.MySQLError as exc:
            self.error = (int(exc.args[0]), str(exc.args[1]))
        finally:
            self.done.set()


def _set_error(server: Any, sql: str) -> int:
    with pytest.raises(pymysql.err.MySQLError) as failure:
        server.query(sql)
    return int(failure.value.args[0])


def _group_gtids(server: Any) -> list[int]:
    """The group GNOs in ``server``'s binlog, in binlog order."""
    return [
        e.event.gno
        for e in binlog_entries(server.datadir)
        if isinstance(e.event, GtidEvent) and str(e.event.sid) == GROUP_NAME
    ]


def _states(group: Group, index: int) -> list[str]:
    return sorted(r[2] for r in group.members(index))


def test_majority_lost_writes_block_until_force_members(group3: Group, etcd3: EtcdMembers) -> None:
    settings = {"group_replication_member_expel_timeout": 60}  # no expel by lease here
    group3.form(**settings)
    survivor = group3.servers[0]
    survivor.query("CREATE DATABASE d")
    survivor.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    acknowledged = set()
    for i in range(10):
        survivor.query(f"INSERT INTO d.t VALUES ({i})")
        acknowledged.add(i)

    group3.kill_member(1)
    group3.kill_member(2)
    group3.wait_states(0, ["ONLINE", "UNREACHABLE", "UNREACHABLE"], timeout=60)
    wait_until(lambda: BLOCKED in survivor.error_log(), 30)

    blocked = Writer(survivor, "INSERT INTO d.t VALUES (100)")
    blocked.start()
    assert not blocked.done.wait(8), f"a write committed or failed in a minority: {blocked.error}"
    assert survivor.query("SELECT COUNT(*) FROM d.t WHERE id = 100") == [(0,)]

    local = etcd3.endpoints[0]
    others = etcd3.endpoints[1:]
    # the etcd cluster still counts the dead members: forcing cannot work yet
    assert _set_error(survivor, f"SET GLOBAL group_replication_force_members = '{local}'") == 1231
    wait_until(lambda: "re-form it" in survivor.error_log(), 10)
    # a dead member cannot be part of the forced membership
    value = f"{local},{others[0]}"
    assert _set_error(survivor, f"SET GLOBAL group_replication_force_members = '{value}'") == 1231
    assert _set_error(survivor, "SET GLOBAL group_replication_force_members = 'nonsense'") == 1231
    assert not blocked.done.is_set()
    assert survivor.query("SELECT @@group_replication_force_members") == [("",)]

    etcd3.force_new_cluster(0)  # the survivor's etcd member, alone, keeping its data
    survivor.query(f"SET GLOBAL group_replication_force_members = '{local}'")
    assert blocked.done.wait(60), "the blocked write did not go on after force_members"
    assert blocked.error is None, blocked.error
    assert _states(group3, 0) == ["ONLINE"]
    log = survivor.error_log()
    assert f"The group_replication_force_members value '{local}' was set" in log
    assert "resumed contact with a majority" in log
    # MySQL keeps the value; it must be emptied before the next START
    assert survivor.query("SELECT @@group_replication_force_members") == [(local,)]
    survivor.query("SET GLOBAL group_replication_force_members = ''")

    acknowledged.add(100)
    for i in range(200, 210):
        survivor.query(f"INSERT INTO d.t VALUES ({i})")
        acknowledged.add(i)
    assert {r[0] for r in survivor.query("SELECT id FROM d.t")} == acknowledged
    # every commit once, each with the next group GTID: 3 view changes (the bootstrap and
    # two joins) + 2 DDL + 10 + 1 + 10
    gnos = _group_gtids(survivor)
    assert gnos == list(range(1, 27)), gnos
    assert survivor.query("SELECT @@gtid_executed") == [(f"{GROUP_NAME}:1-26",)]

    # a forced-out member comes back: its etcd member joins the re-formed cluster afresh,
    # its server restarts and joins, recovering what the survivor wrote alone
    etcd3.rejoin(1, [0])
    returning = group3.servers[1]
    returning.start()
    group3.join(1)
    group3.wait_states(0, ["ONLINE"] * 2, timeout=90)
    group3.wait_states(1, ["ONLINE"] * 2, timeout=30)
    wait_until(
        lambda: {r[0] for r in returning.query("SELECT id FROM d.t")} == acknowledged,
        30,
        lambda: str(returning.query("SELECT id FROM d.t")),
    )
    survivor.query("INSERT INTO d.t VALUES (300)")
    wait_until(lambda: returning.query("SELECT COUNT(*) FROM d.t WHERE id = 300") == [(1,)])
    assert _group_gtids(returning) == _group_gtids(survivor) == list(range(1, 29))


def test_partitioned_member_blocks_until_the_majority_returns(
    group3: Group, etcd3: EtcdMembers
) -> None:
    settings = {"group_replication_member_expel_timeout": 60}
    group3.form(**settings)
    cut_off = group3.servers[0]
    cut_off.query("CREATE DATABASE d")
    cut_off.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    cut_off.query("INSERT INTO d.t VALUES (1)")
    wait_until(lambda: group3.servers[2].query("SELECT COUNT(*) FROM d.t") == [(1,)])
    frozen = [group3.servers[i].process for i in (1, 2)]

    def send(number: signal.Signals) -> None:
        for index, process in zip((1, 2), frozen, strict=True):
            assert process is not None
            etcd3.signal(index, number)
            process.send_signal(number)

    send(signal.SIGSTOP)  # the other side of the partition: silent, not dead
    try:
        group3.wait_states(0, ["ONLINE", "UNREACHABLE", "UNREACHABLE"], timeout=60)
        blocked = Writer(cut_off, "INSERT INTO d.t VALUES (2)")
        blocked.start()
        assert not blocked.done.wait(8), f"a write went on in a minority: {blocked.error}"
    finally:
        send(signal.SIGCONT)
    assert blocked.done.wait(60), "the blocked write did not go on with the majority back"
    assert blocked.error is None, blocked.error
    group3.wait_states(0, ["ONLINE"] * 3)
    assert "resumed contact with a majority" in cut_off.error_log()
    wait_until(lambda: all(s.query("SELECT id FROM d.t") == [(1,), (2,)] for s in group3.servers))
    # 3 view changes, 2 DDL, 2 inserts: the views that brought no one new log nothing
    assert [_group_gtids(s) for s in group3.servers] == [list(range(1, 8))] * 3


def test_unreachable_majority_timeout_errors_out_and_rolls_back(
    group2: Group,
) -> None:
    group2.bootstrap(
        0, group_replication_unreachable_majority_timeout=12, group_replication_autorejoin_tries=0
    )
    group2.join(1)
    group2.wait_states(0, ["ONLINE"] * 2)
    minority = group2.servers[0]
    minority.query("CREATE DATABASE d")
    minority.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    minority.query("INSERT INTO d.t VALUES (1)")

    group2.kill_member(1)
    group2.wait_states(0, ["ONLINE", "UNREACHABLE"], timeout=60)
    seen_at = time.monotonic()
    blocked = Writer(minority, "INSERT INTO d.t VALUES (2)")
    blocked.start()
    assert not blocked.done.wait(4), f"a write committed or failed in a minority: {blocked.error}"
    assert blocked.done.wait(60), "the blocked write was not rolled back"
    assert time.monotonic() - seen_at > 6  # not before the timeout (12 s from detection)
    assert blocked.error == (3100, HOOK_ERROR)
    wait_until(lambda: group2.members(0)[0][2] == "ERROR", 30, lambda: str(group2.members(0)))
    assert minority.query("SELECT @@super_read_only") == [(1,)]
    assert minority.query("SELECT id FROM d.t") == [(1,)]
    log = minority.error_log()
    assert "The server will remain blocked for the next 12 seconds" in log
    assert (
        "This member could not reach a majority of the members for more than 12 seconds. "
        "The member will now leave the group as instructed by the "
        "group_replication_unreachable_majority_timeout option." in log
    )
    assert "automatically set into read only mode" in log
    assert _set_error(minority, "INSERT INTO d.t VALUES (3)") == 1290


def test_force_members_refused_outside_a_minority(group1: Group, etcd1: EtcdMembers) -> None:
    server = group1.servers[0]
    local = etcd1.endpoints[0]
    server.query("SET GLOBAL group_replication_force_members = ''")  # empty: always
    # not running
    assert _set_error(server, f"SET GLOBAL group_replication_force_members = '{local}'") == 1231
    assert "can only be updated when Group Replication is running" in server.error_log()
    group1.bootstrap(0)
    group1.wait_states(0, ["ONLINE"])
    # running, with its majority
    assert _set_error(server, f"SET GLOBAL group_replication_force_members = '{local}'") == 1231
    assert server.query("SELECT @@group_replication_force_members") == [("",)]
    server.query("STOP GROUP_REPLICATION")
    # a value set at start (MySQL refuses START until it is emptied)
    group1.servers[0].stop()
    group1.servers[0].start(f"--group-replication-force-members={local}")
    assert server.query("SELECT @@group_replication_force_members") == [(local,)]
    group1.configure(0, group_replication_bootstrap_group="ON")
    assert _set_error(server, "START GROUP_REPLICATION") == 3092
    assert "group_replication_force_members must be empty on group start" in server.error_log()
    server.query("SET GLOBAL group_replication_force_members = ''")
    server.query("START GROUP_REPLICATION")
    group1.wait_states(0, ["ONLINE"])


def test_unreachable_majority_timeout_with_abort_server_exits(group2: Group) -> None:
    group2.bootstrap(
        0,
        group_replication_unreachable_majority_timeout=5,
        group_replication_exit_state_action="ABORT_SERVER",
        group_replication_autorejoin_tries=1,  # the action comes once the attempt failed
    )
    group2.join(1)
    group2.wait_states(0, ["ONLINE"] * 2)
    minority = group2.servers[0]
    group2.kill_member(1)
    group2.wait_states(0, ["ONLINE", "UNREACHABLE"], timeout=60)
    assert minority.process is not None
    minority.process.wait(90)  # the server aborts, as MySQL's ABORT_SERVER
    log = minority.error_log()
    assert "for more than 5 seconds" in log
    assert "Started auto-rejoin procedure attempt 1 of 1" in log
    assert (
        "Auto-rejoin procedure attempt 1 of 1 finished. Member was not able to join the group."
        in log
    )


def test_stop_group_replication_in_a_minority_rolls_the_blocked_write_back(
    group2: Group,
) -> None:
    group2.bootstrap(0)
    group2.join(1)
    group2.wait_states(0, ["ONLINE"] * 2)
    minority = group2.servers[0]
    minority.query("CREATE DATABASE d")
    minority.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    group2.kill_member(1)
    group2.wait_states(0, ["ONLINE", "UNREACHABLE"], timeout=60)
    blocked = Writer(minority, "INSERT INTO d.t VALUES (1)")
    blocked.start()
    assert not blocked.done.wait(4), f"a write went on in a minority: {blocked.error}"
    minority.query("STOP GROUP_REPLICATION")  # does not wait for the lost majority
    assert blocked.done.wait(30)
    assert blocked.error is not None and blocked.error[0] == 3100, blocked.error
    assert minority.query("SELECT COUNT(*) FROM d.t") == [(0,)]
    assert _states(group2, 0) == ["OFFLINE"]
    assert minority.query("SELECT @@super_read_only") == [(1,)]


def test_stop_group_replication_ends_an_auto_rejoin_procedure(group2: Group) -> None:
    group2.bootstrap(
        0,
        group_replication_unreachable_majority_timeout=5,
        group_replication_exit_state_action="ABORT_SERVER",
        group_replication_autorejoin_tries=2,  # the second would come 300 s later
    )
    group2.join(1)
    group2.wait_states(0, ["ONLINE"] * 2)
    minority = group2.servers[0]
    group2.kill_member(1)
    wait_until(lambda: "Started auto-rejoin procedure attempt 1 of 2" in minority.error_log(), 60)
    # the attempt fails (no etcd majority to join through): the procedure waits
    wait_until(lambda: "Unable to join the group" in minority.error_log(), 90)
    wait_until(lambda: group2.members(0)[0][2] == "ERROR", 30, lambda: str(group2.members(0)))
    assert minority.query("SELECT @@super_read_only") == [(1,)]
    with pytest.raises(pymysql.err.MySQLError) as refused:
        minority.query("SET GLOBAL group_replication_autorejoin_tries = 1")
    assert refused.value.args[0] == 1231
    assert "auto-rejoin process is already running" in refused.value.args[1]
    minority.query("STOP GROUP_REPLICATION")  # ends the procedure: no exit state action
    assert group2.members(0)[0][2] == "OFFLINE"
    minority.query("SET GLOBAL group_replication_autorejoin_tries = 1")
    time.sleep(3)
    assert minority.process is not None and minority.process.poll() is None
    assert "Member was not able to join the group" not in minority.error_log()
