"""Group Replication under faults, as trials: a member SIGKILLed while the primary takes
writes from several sessions. Each trial checks what the group promises: no write the
primary acknowledged is lost, every surviving member ends with the same data and the same
GTIDs in the same order, and the killed member rejoins through recovery.

``RPL_GROUP_FAULT_TRIALS`` trials per kind (default 1, as the default suite runs them;
``tox -e faults`` runs 10). The kinds: the primary killed (a new primary is elected and
takes the writes), a secondary killed (the primary goes on).
"""

from __future__ import annotations

import os
import threading

import pymysql
import pytest

from rpl.core.testing.group import ClientThreads, Group, group_gtids, wait_until

TRIALS = int(os.environ.get("RPL_GROUP_FAULT_TRIALS", "1"))


class Writers(ClientThreads):
    """Sessions inserting into d.t on whichever member is primary, recording each
    acknowledged row; a session whose member died or turned read-only moves on."""

    def __init__(self, group: Group, sessions: int = 3) -> None:
        self.group = group
        self.acknowledged: list[int] = []
        super().__init__(
            [
                threading.Thread(target=self._write, args=(n * 1_000_000,), daemon=True)
                for n in range(1, sessions + 1)
            ]
        )

    def _write(self, first: int) -> None:
        i = first
        while not self.done.is_set():
            primary = _primary(self.group)
            if primary is None:
                self.done.wait(0.2)
                continue
            try:
                connection = self.group.servers[primary].connect(connect_timeout=5, read_timeout=30)
                with connection.cursor() as cursor:
                    while not self.done.is_set():
                        i += 1
                        cursor.execute(f"INSERT INTO d.t VALUES ({i})")
                        self.acknowledged.append(i)
                connection.close()
            except pymysql.err.MySQLError:
                self.done.wait(0.2)  # killed, read-only, or the group refused it: go on


def _primary(group: Group) -> int | None:
    """The index of the member an ONLINE member sees as PRIMARY."""
    ports = {s.port: i for i, s in enumerate(group.servers)}
    for server in group.servers:
        if server.process is None or server.process.poll() is not None:
            continue
        try:
            rows = server.query(
                "SELECT MEMBER_PORT, MEMBER_STATE, MEMBER_ROLE "
                "FROM performance_schema.replication_group_members"
            )
        except pymysql.err.MySQLError:
            continue
        for port, state, role in rows:
            if role == "PRIMARY" and state == "ONLINE":
                return ports.get(port)
    return None


@pytest.mark.parametrize("trial", range(TRIALS))
@pytest.mark.parametrize("victim", ["primary", "secondary"])
def test_a_member_killed_under_writes_loses_nothing_acknowledged(
    group: Group, victim: str, trial: int
) -> None:
    group.bootstrap(0)
    group.wait_states(0, ["ONLINE"])
    group.join(1)
    group.join(2)
    group.wait_states(0, ["ONLINE"] * 3)
    group.servers[0].query("CREATE DATABASE d")
    group.servers[0].query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    killed = 0 if victim == "primary" else 1 + trial % 2
    with Writers(group) as writers:
        wait_until(lambda: len(writers.acknowledged) > 40 + 10 * trial)
        group.servers[killed].kill()
        survivors = [i for i in range(3) if i != killed]
        wait_until(
            lambda: _primary(group) in survivors, 90, lambda: str(group.members(survivors[0]))
        )
        count = len(writers.acknowledged)
        wait_until(lambda: len(writers.acknowledged) > count + 20, 90)  # the group takes writes
    survivors = [i for i in range(3) if i != killed]
    executed = group.servers[survivors[0]].query("SELECT @@gtid_executed")
    wait_until(lambda: group.servers[survivors[1]].query("SELECT @@gtid_executed") == executed, 60)
    for index in survivors:
        rows = {r[0] for r in group.servers[index].query("SELECT id FROM d.t")}
        lost = set(writers.acknowledged) - rows
        assert not lost, (index, sorted(lost)[:10])
    assert group_gtids(group, survivors[0]) == group_gtids(group, survivors[1])
    group.wait_states(survivors[0], ["ONLINE"] * 2, timeout=60)  # the old incarnation expelled
    old = group.servers[killed]
    old.start()
    group.join(killed)
    group.wait_states(killed, ["ONLINE"] * 3, timeout=120)
    final = group.servers[survivors[0]].query("SELECT @@gtid_executed")
    wait_until(lambda: old.query("SELECT @@gtid_executed") == final, 60)
    checksum = group.servers[survivors[0]].query("CHECKSUM TABLE d.t")
    assert old.query("CHECKSUM TABLE d.t") == checksum
