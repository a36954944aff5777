"""group_replication_consistency AFTER and BEFORE_AND_AFTER (WL#10379 FR-02, FR-03,
FR-05 ... FR-08, FR-12) on three real servers and etcd members: the commit waits for
every ONLINE member's prepared acknowledgement, the members that prepared hold new
transactions until they commit, leavers count as acknowledged, an unreachable member
holds the commit until it is expelled, STOP GROUP_REPLICATION rolls the origin's
transaction back while the group commits it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pymysql
import pytest

from rpl.core.testing.group import Group, wait_until
from rpl.group_replication.consistency import members_that_must_prepare
from rpl.group_replication.members import Member, MemberState

PAUSE = "pause_plugin_applier"
"""The server's sync point that holds the Group Replication applier (rpl.core.debug)."""
HELD = "Executing hook on transaction begin."


class Statement(threading.Thread):
    """One statement on its own connection at a consistency level; its outcome."""

    def __init__(self, server: Any, sql: str, level: str = "EVENTUAL", **session: Any) -> None:
        super().__init__(daemon=True)
        self.connection = server.connect()
        with self.connection.cursor() as cursor:
            for name, value in session.items():
                cursor.execute(f"SET SESSION {name} = {value}")
            cursor.execute(f"SET SESSION group_replication_consistency = '{level}'")
        self.sql = sql
        self.rows: list[tuple[Any, ...]] | None = None
        self.error: tuple[Any, ...] | None = None
        self.done = threading.Event()
        self.thread_id = self.connection.thread_id()

    def run(self) -> None:
        try:
            with self.connection.cursor() as cursor:
                cursor.execute(self.sql)
                self.rows = list(cursor.fetchall())
        except pymysql.err.MySQLError as exc:
            self.error = exc.args
        finally:
            self.done.set()

    def finish(self, timeout: float = 30.0) -> None:
        assert self.done.wait(timeout), f"{self.sql} did not end"
        self.connection.close()


def _three(group: Group, **settings: Any) -> tuple[Any, Any, Any]:
    """A primary and two secondaries holding ``d.t`` with the row 1."""
    group.form(**settings)
    m1, m2, m3 = group.servers
    m1.query("CREATE DATABASE d")
    m1.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    m1.query("INSERT INTO d.t VALUES (1)")
    for server in (m2, m3):
        wait_until(_shows(server, "SELECT COUNT(*) FROM d.t", 1))
    return m1, m2, m3


def _shows(server: Any, sql: str, count: int) -> Callable[[], bool]:
    """Whether ``server`` answers ``sql`` with the single value ``count``."""
    return lambda: bool(server.query(sql) == [(count,)])


def _status(server: Any, name: str) -> int:
    return int(server.query(f"SHOW GLOBAL STATUS LIKE '{name}'")[0][1])


def _state(server: Any, thread_id: int) -> str:
    rows = server.query(f"SELECT STATE FROM information_schema.PROCESSLIST WHERE ID = {thread_id}")
    return str(rows[0][0]) if rows else ""


def test_after_commits_once_every_online_member_prepared(group: Group) -> None:
    """FR-05, FR-02: the AFTER commit waits for the member that cannot prepare; when its
    client has OK, every ONLINE member shows the row. A member that has not prepared
    holds nobody (the checklist's first case)."""
    m1, m2, m3 = _three(group)
    m3.query(f"SET GLOBAL debug = '+d,{PAUSE}'")  # m3 cannot prepare
    write = Statement(m1, "INSERT INTO d.t VALUES (2)", "AFTER")
    write.start()
    assert not write.done.wait(3), f"AFTER committed before m3 prepared: {write.error}"
    assert m1.query("SELECT COUNT(*) FROM d.t WHERE id = 2") == [(0,)]  # not externalized
    assert m3.query("SELECT COUNT(*) FROM d.t") == [(1,)]  # m3 did not prepare: not held
    m3.query(f"SET GLOBAL debug = '-d,{PAUSE}'")
    write.finish()
    assert write.error is None, write.error
    # the client has OK: every ONLINE member reads the row at once, EVENTUAL readers too
    for server in (m1, m2, m3):
        assert server.query("SELECT COUNT(*) FROM d.t WHERE id = 2") == [(1,)]
    assert _status(m1, "Gr_transactions_consistency_after_termination_count") == 1
    assert _status(m1, "Gr_transactions_consistency_after_termination_time_sum") >= 2_000_000
    gtids = [s.query("SELECT @@gtid_executed")[0][0] for s in group.servers]
    assert gtids[0] == gtids[1] == gtids[2]


def test_a_member_that_prepared_holds_new_transactions_until_it_commits(group: Group) -> None:
    """FR-06, E2: m2 prepared and acknowledged, m3 did not: m2 holds every new
    transaction (EVENTUAL ones too) in 'Executing hook on transaction begin.' until the
    AFTER transaction commits there; a held one times out with 3798."""
    m1, m2, m3 = _three(group)
    m3.query(f"SET GLOBAL debug = '+d,{PAUSE}'")
    write = Statement(m1, "INSERT INTO d.t VALUES (2)", "AFTER")
    write.start()
    time.sleep(2)  # m2 applied the transaction up to its commit and acknowledged it
    held = Statement(m2, "SELECT COUNT(*) FROM d.t")
    held.start()
    wait_until(
        lambda: _state(m2, held.thread_id) == HELD, 20, lambda: str(m2.query("SHOW PROCESSLIST"))
    )
    listed = [r for r in m2.query("SHOW PROCESSLIST") if r[0] == held.thread_id]
    assert listed[0][6] == HELD
    threads = m2.query(
        "SELECT TYPE, PROCESSLIST_STATE FROM performance_schema.threads "
        f"WHERE PROCESSLIST_ID = {held.thread_id}"
    )
    assert threads == [("FOREGROUND", HELD)]
    impatient = Statement(m2, "SELECT COUNT(*) FROM d.t", wait_timeout=2)
    impatient.start()
    impatient.finish()
    assert impatient.error == (
        3798,
        "Error while waiting for transactions with group_replication_consistency= 'AFTER' "
        "to commit.",
    )
    assert not held.done.is_set() and not write.done.is_set()
    m3.query(f"SET GLOBAL debug = '-d,{PAUSE}'")
    write.finish()
    held.finish()
    assert write.error is None and held.error is None, (write.error, held.error)
    assert held.rows == [(2,)]  # it ran after the AFTER transaction committed on m2
    assert _status(m2, "Gr_transactions_consistency_after_sync_count") >= 2
    assert _status(m1, "Gr_transactions_consistency_after_sync_count") == 0


def test_before_and_after_reads_fresh_and_holds(group: Group) -> None:
    """FR-03: BEFORE_AND_AFTER waits at its start for what was ordered before it, and its
    commit waits for every ONLINE member's acknowledgement."""
    m1, m2, m3 = _three(group)
    m2.query(f"SET GLOBAL debug = '+d,{PAUSE}'")
    m1.query("INSERT INTO d.t VALUES (2)")  # EVENTUAL: m2 does not have it yet
    read = Statement(m2, "SELECT COUNT(*) FROM d.t", "BEFORE_AND_AFTER")
    read.start()
    assert not read.done.wait(2), "BEFORE_AND_AFTER read before m2 applied what came first"
    m2.query(f"SET GLOBAL debug = '-d,{PAUSE}'")
    read.finish()
    assert read.rows == [(2,)] and read.error is None
    m3.query(f"SET GLOBAL debug = '+d,{PAUSE}'")
    write = Statement(m1, "INSERT INTO d.t VALUES (3)", "BEFORE_AND_AFTER")
    write.start()
    assert not write.done.wait(3)
    m3.query(f"SET GLOBAL debug = '-d,{PAUSE}'")
    write.finish()
    assert write.error is None, write.error
    assert m3.query("SELECT COUNT(*) FROM d.t WHERE id = 3") == [(1,)]
    assert _status(m2, "Gr_transactions_consistency_before_begin_count") == 1


def test_an_unreachable_member_holds_the_commit_until_it_is_expelled(group: Group) -> None:
    """FR-08 then FR-07: a member killed before it prepared is UNREACHABLE: the commit
    waits; once the group expels it, its acknowledgement is no longer awaited."""
    m1, m2, m3 = _three(group)
    m3.query(f"SET GLOBAL debug = '+d,{PAUSE}'")
    write = Statement(m1, "INSERT INTO d.t VALUES (2)", "AFTER")
    write.start()
    time.sleep(1)
    group.kill_member(2)
    wait_until(lambda: "UNREACHABLE" in {r[2] for r in group.members(0)}, 30)
    assert not write.done.is_set(), "AFTER committed while a member was unreachable"
    wait_until(lambda: len(group.members(0)) == 2, 60, lambda: str(group.members(0)))
    write.finish()
    assert write.error is None, write.error
    assert m2.query("SELECT COUNT(*) FROM d.t WHERE id = 2") == [(1,)]


def test_stop_on_the_origin_rolls_back_locally_and_the_group_commits(group: Group) -> None:
    """FR-12 and FR-07: the origin leaves while its AFTER transaction waits: its client
    gets an error and the origin has no row, the remaining members commit it."""
    m1, m2, m3 = _three(group, group_replication_single_primary_mode="OFF")
    m3.query(f"SET GLOBAL debug = '+d,{PAUSE}'")
    write = Statement(m1, "INSERT INTO d.t VALUES (2)", "AFTER")
    write.start()
    time.sleep(2)
    m1.query("STOP GROUP_REPLICATION")
    write.finish()
    assert write.error is not None and write.error[0] == 3100, write.error
    assert m1.query("SELECT COUNT(*) FROM d.t WHERE id = 2") == [(0,)]
    m3.query(f"SET GLOBAL debug = '-d,{PAUSE}'")
    for server in (m2, m3):
        wait_until(_shows(server, "SELECT COUNT(*) FROM d.t WHERE id = 2", 1))


def test_a_group_of_one_commits_at_once(group: Group) -> None:
    group.bootstrap(0)
    group.wait_states(0, ["ONLINE"])
    server = group.servers[0]
    server.query("CREATE DATABASE d")
    server.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    for number, level in enumerate(("AFTER", "BEFORE_AND_AFTER", "BEFORE")):
        write = Statement(server, f"INSERT INTO d.t VALUES ({number})", level)
        write.start()
        write.finish(10)
        assert write.error is None, (level, write.error)
    assert server.query("SELECT COUNT(*) FROM d.t") == [(3,)]


def _member(member_id: str, version: str, state: MemberState = MemberState.ONLINE) -> Member:
    return Member(member_id, "h", 3306, version, 50, state)


@pytest.mark.parametrize("old", ["8.0.13", "5.7.30-log"])
def test_a_member_older_than_8_0_14_refuses_after(old: str) -> None:
    """FR-10: the list of members that must prepare is None (the transaction rolls back
    on every member alike) when one member of the view is older than 8.0.14."""
    view = [_member("a", "8.0.36-rpl"), _member("b", "8.0.36-rpl")]
    assert members_that_must_prepare(view, "a") == frozenset({"b"})
    assert members_that_must_prepare([*view, _member("c", old)], "a") is None
    recovering = _member("c", "8.0.14", MemberState.RECOVERING)
    assert members_that_must_prepare([*view, recovering], "b") == frozenset({"a"})  # not waited for


def test_a_joiner_stays_recovering_until_an_after_transaction_completes(group: Group) -> None:
    """The checklist: a member joining while an AFTER transaction waits for an
    acknowledgement stays RECOVERING until it completes (its donor has not committed it),
    is not waited for, and then has it."""
    group.bootstrap(0)
    group.join(1)
    group.wait_states(0, ["ONLINE"] * 2)
    m1, m2, m3 = group.servers
    m1.query("CREATE DATABASE d")
    m1.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    wait_until(
        _shows(m2, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'd'", 1)
    )
    m2.query(f"SET GLOBAL debug = '+d,{PAUSE}'")
    write = Statement(m1, "INSERT INTO d.t VALUES (1)", "AFTER")
    write.start()
    time.sleep(1)
    group.join(2)
    time.sleep(4)
    states = sorted(r[2] for r in group.members(0))
    assert states == ["ONLINE", "ONLINE", "RECOVERING"], states
    assert not write.done.is_set()
    m2.query(f"SET GLOBAL debug = '-d,{PAUSE}'")
    write.finish()
    assert write.error is None, write.error
    group.wait_states(2, ["ONLINE"] * 3)
    assert m3.query("SELECT COUNT(*) FROM d.t") == [(1,)]
