"""A three-member group on real etcd members and real servers: bootstrap, join,
replication with group GTIDs in one order, secondaries read-only, conflicts in
multi-primary mode, bad configurations."""

from __future__ import annotations

import threading
import time
from typing import Any

import pymysql
import pytest

from rpl.core.testing.group import (
    GROUP_NAME,
    EtcdMembers,
    Group,
    group_gtids,
    view_changes,
    wait_until,
)
from rpl.group_replication.gcs.batching import frame


def _errno(server: object, sql: str) -> int:
    with pytest.raises(pymysql.err.MySQLError) as failure:
        server.query(sql)  # type: ignore[attr-defined]
    return int(failure.value.args[0])


def test_three_members_replicate_in_one_order(group: Group) -> None:
    group.bootstrap(0)
    group.wait_states(0, ["ONLINE"])
    # the bootstrap view is the group's first transaction, as in MySQL 8.0
    wait_until(
        lambda: group.servers[0].query("SELECT @@gtid_executed") == [(f"{GROUP_NAME}:1",)], 20
    )
    group.join(1)
    group.join(2)
    for index in range(3):
        group.wait_states(index, ["ONLINE"] * 3)
    shown = [r for r in group.servers[2].query("SHOW BINLOG EVENTS") if r[2] == "View_change"]
    assert len(shown) == 3 and all(r[5].endswith(", seq_number=0") for r in shown), shown
    roles = {r[1]: r[3] for r in group.members(0)}
    assert sorted(roles.values()) == ["PRIMARY", "SECONDARY", "SECONDARY"]
    assert roles[group.servers[0].port] == "PRIMARY"
    primary = group.servers[0]
    primary.query("CREATE DATABASE d")
    primary.query("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20))")
    for i in range(30):
        primary.query(f"INSERT INTO d.t VALUES ({i}, 'v{i}')")
    primary.query("UPDATE d.t SET v = 'changed' WHERE id < 10")
    wait_until(
        lambda: all(
            s.query("SELECT @@gtid_executed") == primary.query("SELECT @@gtid_executed")
            for s in group.servers
        ),
        60,
        lambda: str([s.query("SELECT @@gtid_executed") for s in group.servers]),
    )
    sums = [s.query("CHECKSUM TABLE d.t") for s in group.servers]
    assert sums[0] == sums[1] == sums[2]
    orders = [group_gtids(group, i) for i in range(3)]
    assert len(orders[0]) == 36  # 3 view changes (bootstrap, two joins), then 33
    assert orders[0] == orders[1] == orders[2]
    views = [view_changes(group, i) for i in range(3)]
    assert [gtid for gtid, _ in views[0]] == [f"{GROUP_NAME}:{gno}" for gno in (1, 2, 3)]
    assert views[0] == views[1] == views[2]
    assert len({view_id for _, view_id in views[0]}) == 3
    assert _errno(group.servers[1], "INSERT INTO d.t VALUES (100, 'x')") == 1290
    secondary_id = group.servers[1].query("SELECT @@server_uuid")[0][0]
    stats = group.servers[1].query(
        "SELECT COUNT_TRANSACTIONS_CHECKED, COUNT_CONFLICTS_DETECTED "
        f"FROM performance_schema.replication_group_member_stats WHERE MEMBER_ID = '{secondary_id}'"
    )  # its own row (another member's is up to a second old)
    assert stats[0][0] >= 33 and stats[0][1] == 0  # view changes are not certified
    # every member shows every member's counters, the primary's as it sent them
    member_ids = {
        r[0]
        for r in group.servers[0].query(
            "SELECT MEMBER_ID FROM performance_schema.replication_group_members"
        )
    }
    everyone = (
        "SELECT MEMBER_ID, COUNT_TRANSACTIONS_LOCAL_PROPOSED, LAST_CONFLICT_FREE_TRANSACTION, "
        "TRANSACTIONS_COMMITTED_ALL_MEMBERS FROM performance_schema.replication_group_member_stats"
    )
    primary_id = primary.query("SELECT @@server_uuid")[0][0]

    def primary_row_seen_by_each() -> bool:
        for server in group.servers:
            rows = {r[0]: r for r in server.query(everyone)}
            if set(rows) != member_ids:
                return False
            if rows[primary_id][1:] != (33, f"{GROUP_NAME}:36", f"{GROUP_NAME}:1-36"):
                return False
        return True

    wait_until(
        primary_row_seen_by_each, 30, lambda: str([s.query(everyone) for s in group.servers])
    )
    timings = [_commit_timings(s) for s in group.servers]
    assert timings[0]["count"] == 33  # every group transaction was local there
    assert timings[1]["count"] == timings[2]["count"] == 0
    assert timings[0]["broadcast_time"] > 0 and timings[0]["server_time"] > 0
    primary.query("FLUSH STATUS")
    assert set(_commit_timings(primary).values()) == {0}


def _commit_timings(server: object) -> dict[str, int]:
    """The group_replication_commit_* totals (rpl.group_replication.timings)."""
    rows = server.query("SHOW GLOBAL STATUS LIKE 'group_replication_commit_%'")  # type: ignore[attr-defined]
    return {name.removeprefix("group_replication_commit_"): int(v) for name, v in rows}


def _multi_primary_pair(group: Group, rows: int) -> tuple[Any, Any]:
    """Members 0 and 1 as a multi-primary group with ``d.t`` holding ``rows`` rows
    ``(id, 0)`` on both."""
    for index in range(2):
        group.configure(index, group_replication_single_primary_mode="OFF")
    group.bootstrap(0)
    group.join(1)
    group.wait_states(0, ["ONLINE"] * 2)
    group.wait_states(1, ["ONLINE"] * 2)
    a, b = group.servers[0], group.servers[1]
    a.query("CREATE DATABASE d")
    a.query("CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
    a.query("INSERT INTO d.t VALUES " + ", ".join(f"({i}, 0)" for i in range(1, rows + 1)))
    wait_until(lambda: b.query("SELECT COUNT(*) FROM d.t") == [(rows,)])
    return a, b


def test_multi_primary_conflict_one_commits(group: Group) -> None:
    a, b = _multi_primary_pair(group, 1)
    ca, cb = a.connect(), b.connect()
    try:
        ca.cursor().execute("BEGIN")
        cb.cursor().execute("BEGIN")
        ca.cursor().execute("UPDATE d.t SET v = 1 WHERE id = 1")
        cb.cursor().execute("UPDATE d.t SET v = 2 WHERE id = 1")
        outcomes = []
        for connection in (ca, cb):
            try:
                connection.cursor().execute("COMMIT")
                outcomes.append(0)
            except pymysql.err.MySQLError as exc:
                outcomes.append(int(exc.args[0]))
    finally:
        ca.close()
        cb.close()
    # the loser fails certification (3101), or, when the winner's applier on its member
    # came first, was killed by it (1180, see the next test)
    assert sorted(outcomes)[0] == 0 and sorted(outcomes)[1] in (3101, 1180), outcomes
    winner = 1 if outcomes[0] == 0 else 2
    wait_until(lambda: all(s.query("SELECT v FROM d.t") == [(winner,)] for s in (a, b)))


def test_the_applier_kills_a_local_transaction_holding_its_row(group: Group) -> None:
    """A remote transaction certified before a local one that holds its row lock, and
    is not committing yet, kills that local one (MySQL's high-priority applier)
    instead of waiting for innodb_lock_wait_timeout (50 s)."""
    a, b = _multi_primary_pair(group, 2)
    local = b.connect(autocommit=False)
    with local.cursor() as cursor:
        cursor.execute("UPDATE d.t SET v = 2 WHERE id = 1")  # holds row 1, idle
        cursor.execute("UPDATE d.t SET v = 2 WHERE id = 2")  # and row 2
        a.query("UPDATE d.t SET v = 1 WHERE id = 1")
        wait_until(lambda: b.query("SELECT v FROM d.t WHERE id = 1") == [(1,)], 20)
        with pytest.raises(pymysql.err.MySQLError) as failure:
            local.commit()
    local.close()
    assert failure.value.args[0] == 1180
    assert "Lock deadlock; Retry transaction" in failure.value.args[1]
    b.query("UPDATE d.t SET v = 3 WHERE id = 2")  # the victim's other row lock is gone
    wait_until(
        lambda: all(s.query("SELECT v FROM d.t") == [(1,), (3,)] for s in (a, b)),
        20,
        lambda: str([s.query("SELECT v FROM d.t") for s in (a, b)]),
    )
    assert group_gtids(group, 0) == group_gtids(group, 1)


def test_bad_configuration_gets_mysql_errors(group: Group) -> None:
    server = group.servers[0]
    assert _errno(server, "START GROUP_REPLICATION") == 3092  # no group name
    assert _errno(server, "SET GLOBAL group_replication_group_name = 'not-a-uuid'") == 1231
    group.configure(0)
    assert _errno(server, "START GROUP_REPLICATION") == 3092  # no group to join
    group.bootstrap(0)
    group.wait_states(0, ["ONLINE"])
    assert _errno(server, "START GROUP_REPLICATION") == 3093  # running
    assert (
        _errno(
            server,
            "SET GLOBAL group_replication_group_name = 'aaaaaaaa-bbbb-cccc-dddd-000000000000'",
        )
        == 3093
    )
    other = group.servers[1]
    group.configure(1, group_replication_bootstrap_group="ON")
    assert _errno(other, "START GROUP_REPLICATION") == 3092  # bootstrap twice
    assert "already has members" in other.error_log()
    server.query("STOP GROUP_REPLICATION")
    assert server.query("SELECT @@super_read_only") == [(1,)]


def test_joiner_recovers_what_it_missed_then_follows(group: Group) -> None:
    group.bootstrap(0)
    group.wait_states(0, ["ONLINE"])
    primary = group.servers[0]
    primary.query("CREATE DATABASE d")
    primary.query("CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
    for i in range(20):
        primary.query(f"INSERT INTO d.t VALUES ({i}, {i})")
    group.join(1)
    group.wait_states(1, ["ONLINE"] * 2)
    for i in range(20, 30):
        primary.query(f"INSERT INTO d.t VALUES ({i}, {i})")
    joiner = group.servers[1]
    wait_until(lambda: joiner.query("SELECT COUNT(*) FROM d.t") == [(30,)])
    assert joiner.query("CHECKSUM TABLE d.t") == primary.query("CHECKSUM TABLE d.t")
    assert group_gtids(group, 1) == group_gtids(group, 0)
    assert "Establishing group recovery connection" in joiner.error_log()


def _primary_index(group: Group, observer: int) -> int | None:
    ports = {s.port: i for i, s in enumerate(group.servers)}
    for _, port, state, role in group.members(observer):
        if role == "PRIMARY" and state == "ONLINE":
            return ports[port]
    return None


def test_primary_killed_new_primary_nothing_acknowledged_lost_old_one_rejoins(
    group: Group,
) -> None:
    group.bootstrap(0)
    group.wait_states(0, ["ONLINE"])
    group.join(1)
    group.join(2)
    group.wait_states(0, ["ONLINE"] * 3)
    old = group.servers[0]
    old.query("CREATE DATABASE d")
    old.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    acknowledged = []
    for i in range(40):
        old.query(f"INSERT INTO d.t VALUES ({i})")
        acknowledged.append(i)
    old.kill()
    wait_until(lambda: _primary_index(group, 1) in (1, 2), 60, lambda: str(group.members(1)))
    new_index = _primary_index(group, 1)
    assert new_index is not None
    new = group.servers[new_index]
    wait_until(lambda: new.query("SELECT @@super_read_only") == [(0,)])
    rows = {r[0] for r in new.query("SELECT id FROM d.t")}
    assert set(acknowledged) <= rows
    new.query("INSERT INTO d.t VALUES (1000)")
    old.start()
    group.join(0)
    group.wait_states(0, ["ONLINE"] * 3)
    wait_until(lambda: old.query("SELECT COUNT(*) FROM d.t") == [(41,)])
    assert old.query("CHECKSUM TABLE d.t") == new.query("CHECKSUM TABLE d.t")
    assert old.query("SELECT @@super_read_only") == [(1,)]


def test_group_goes_on_when_an_etcd_member_dies(group: Group, etcd: EtcdMembers) -> None:
    group.bootstrap(0)
    group.join(1)
    group.wait_states(1, ["ONLINE"] * 2)
    primary = group.servers[0]
    primary.query("CREATE DATABASE d")
    primary.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    etcd.kill(0)  # member 0's local etcd member
    for i in range(20):
        primary.query(f"INSERT INTO d.t VALUES ({i})")
    wait_until(lambda: group.servers[1].query("SELECT COUNT(*) FROM d.t") == [(20,)])
    assert group_gtids(group, 0) == group_gtids(group, 1)


@pytest.mark.parametrize(
    ("value", "logged"),
    [
        (frame([b"garbage"]), "malformed group message"),  # a batch of a message no one reads
        (b"garbage", "malformed message batch"),  # not even a batch
    ],
)
def test_malformed_group_message_sends_the_member_to_error(
    group: Group, etcd: EtcdMembers, value: bytes, logged: str
) -> None:
    import base64
    import urllib.request

    group.bootstrap(0)
    group.wait_states(0, ["ONLINE"])
    # under a member's name: the binding delivers no message of a non-member
    sender = group.servers[0].query("SELECT @@server_uuid")[0][0]
    key = base64.b64encode(f"/rpl/gr/{GROUP_NAME}/msg/{sender}/garbage-1".encode()).decode()
    body = f'{{"key":"{key}","value":"{base64.b64encode(value).decode()}"}}'.encode()
    request = urllib.request.Request(f"http://{etcd.endpoints[1]}/v3/kv/put", data=body)
    with urllib.request.urlopen(request, timeout=5):
        pass
    wait_until(lambda: group.members(0)[0][2] == "ERROR", 30, lambda: str(group.members(0)))
    server = group.servers[0]
    assert logged in server.error_log()
    assert server.query("SELECT @@super_read_only") == [(1,)]
    assert server.query("SELECT 1") == [(1,)]  # the server goes on


def test_a_paused_member_is_suspected_expelled_and_can_rejoin(group: Group) -> None:
    import signal

    group.bootstrap(0)
    group.join(1)
    group.join(2, group_replication_autorejoin_tries=0)  # it stays out: rejoined by hand
    group.wait_states(0, ["ONLINE"] * 3)
    paused = group.servers[2]
    assert paused.process is not None
    paused.process.send_signal(signal.SIGSTOP)
    try:
        group.wait_states(0, ["ONLINE", "ONLINE", "UNREACHABLE"], timeout=30)
        group.wait_states(0, ["ONLINE", "ONLINE"], timeout=30)  # expelled
        group.servers[0].query("CREATE DATABASE d")
    finally:
        paused.process.send_signal(signal.SIGCONT)
    wait_until(lambda: group.members(2)[0][2] == "ERROR", 30, lambda: str(group.members(2)))
    paused.query("STOP GROUP_REPLICATION")
    group.join(2)
    group.wait_states(2, ["ONLINE"] * 3)
    wait_until(lambda: ("d",) in paused.query("SHOW DATABASES"))


def test_an_expelled_member_rejoins_by_itself(group: Group) -> None:
    """group_replication_autorejoin_tries (default 3): the first attempt comes at once
    and runs a whole distributed recovery."""
    import signal

    group.form()
    paused = group.servers[2]
    assert paused.query("SELECT @@group_replication_autorejoin_tries") == [(3,)]
    assert paused.process is not None
    paused.process.send_signal(signal.SIGSTOP)
    try:
        group.wait_states(0, ["ONLINE", "ONLINE"], timeout=30)  # expelled
        group.servers[0].query("CREATE DATABASE d")
        group.servers[0].query("CREATE TABLE d.t (id INT PRIMARY KEY)")
        group.servers[0].query("INSERT INTO d.t VALUES (1), (2)")
    finally:
        paused.process.send_signal(signal.SIGCONT)
    wait_until(lambda: "Started auto-rejoin procedure attempt 1 of 3" in paused.error_log(), 30)
    group.wait_states(0, ["ONLINE"] * 3, timeout=60)
    group.wait_states(2, ["ONLINE"] * 3, timeout=60)
    wait_until(lambda: paused.query("SELECT COUNT(*) FROM d.t") == [(2,)], 30)
    log = paused.error_log()
    assert "this member was expelled from the group" in log
    assert (
        "Auto-rejoin procedure attempt 1 of 3 finished. Member was able to join the group." in log
    )
    assert group_gtids(group, 2) == group_gtids(group, 0)
    paused.query("SET GLOBAL group_replication_autorejoin_tries = 5")  # none runs now


def test_stop_group_replication_under_load_loses_nothing_acknowledged(group: Group) -> None:
    group.bootstrap(0)
    group.join(1)
    group.wait_states(1, ["ONLINE"] * 2)
    primary, secondary = group.servers[0], group.servers[1]
    primary.query("CREATE DATABASE d")
    primary.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    acknowledged: list[int] = []
    done = threading.Event()

    def write() -> None:
        connection = primary.connect()
        i = 0
        while not done.is_set():
            i += 1
            try:
                connection.cursor().execute(f"INSERT INTO d.t VALUES ({i})")
                acknowledged.append(i)
            except pymysql.err.MySQLError:
                pass
        connection.close()

    writer = threading.Thread(target=write)
    writer.start()
    wait_until(lambda: len(acknowledged) > 20)
    primary.query("STOP GROUP_REPLICATION")
    done.set()
    writer.join()
    rows = {r[0] for r in primary.query("SELECT id FROM d.t")}
    assert set(acknowledged) <= rows
    group.wait_states(1, ["ONLINE"])
    wait_until(lambda: set(acknowledged) <= {r[0] for r in secondary.query("SELECT id FROM d.t")})


def test_local_transactions_waiting_on_a_row_lock_do_not_conflict(group: Group) -> None:
    """The snapshot is gtid_executed at commit, as MySQL takes it: a transaction that began
    before another local one committed, then changed the row that one released, is no
    conflict (with a snapshot taken when the transaction began it got 3101).
    """
    group.bootstrap(0)
    group.wait_states(0, ["ONLINE"])
    primary = group.servers[0]
    primary.query("CREATE DATABASE d")
    primary.query("CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
    primary.query("INSERT INTO d.t VALUES (1, 0)")
    first, second = primary.connect(autocommit=False), primary.connect(autocommit=False)
    with first.cursor() as a, second.cursor() as b:
        a.execute("UPDATE d.t SET v = v + 1 WHERE id = 1")
        b.execute("SELECT COUNT(*) FROM d.t")  # the second transaction begins here
        waiting = threading.Thread(
            target=b.execute, args=("UPDATE d.t SET v = v + 10 WHERE id = 1",)
        )
        waiting.start()
        wait_until(
            lambda: any(
                "UPDATE d.t SET v = v + 10" in str(row[7] or "")
                for row in primary.query("SHOW PROCESSLIST")
            ),
            30,
            lambda: str(primary.query("SHOW PROCESSLIST")),
        )
        first.commit()
        waiting.join(30)
        second.commit()
    assert primary.query("SELECT v FROM d.t WHERE id = 1") == [(11,)]
    first.close()
    second.close()


def test_joiners_under_write_load_reach_online_with_the_same_data(group: Group) -> None:
    """Two members join while the primary takes inserts and updates from three sessions:
    each recovers from a donor, applies what the group delivered meanwhile, goes ONLINE,
    and ends with the primary's data (CHECKSUM TABLE) and every acknowledged write.
    """
    group.bootstrap(0)
    group.wait_states(0, ["ONLINE"])
    primary = group.servers[0]
    primary.query("CREATE DATABASE d")
    primary.query("CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
    primary.query("INSERT INTO d.t VALUES " + ",".join(f"({i}, 0)" for i in range(100)))
    acknowledged: list[int] = []
    updates = [0]
    done = threading.Event()

    def insert(first: int) -> None:
        connection = primary.connect()
        for i in range(first, first + 100_000):
            if done.is_set():
                break
            connection.cursor().execute(f"INSERT INTO d.t VALUES ({i}, {i})")
            acknowledged.append(i)
        connection.close()

    def update() -> None:
        connection = primary.connect()
        while not done.is_set():
            connection.cursor().execute(f"UPDATE d.t SET v = v + 1 WHERE id = {updates[0] % 100}")
            updates[0] += 1
        connection.close()

    writers = [threading.Thread(target=insert, args=(n,)) for n in (1_000_000, 2_000_000)]
    writers.append(threading.Thread(target=update))
    for writer in writers:
        writer.start()
    try:
        wait_until(lambda: len(acknowledged) > 30)
        group.join(1)
        group.wait_states(1, ["ONLINE"] * 2, timeout=120)
        group.join(2)
        group.wait_states(2, ["ONLINE"] * 3, timeout=120)
        joined_at = len(acknowledged)
        wait_until(lambda: len(acknowledged) > joined_at + 30)
    finally:
        done.set()
        for writer in writers:
            writer.join(60)
    assert updates[0] > 0
    executed = primary.query("SELECT @@gtid_executed")
    wait_until(
        lambda: all(s.query("SELECT @@gtid_executed") == executed for s in group.servers),
        120,
        lambda: str([s.query("SELECT @@gtid_executed") for s in group.servers]),
    )
    checksum = primary.query("CHECKSUM TABLE d.t")
    for index, server in enumerate(group.servers):
        assert server.query("CHECKSUM TABLE d.t") == checksum, index
        assert set(acknowledged) <= {r[0] for r in server.query("SELECT id FROM d.t")}, index
    assert group_gtids(group, 1) == group_gtids(group, 0) == group_gtids(group, 2)


def test_a_commit_blocked_in_the_group_leaves_the_thread_pool_serving(
    group: Group, etcd: EtcdMembers
) -> None:
    """With one pool worker and a stall limit of a minute, a commit that waits in
    before_commit for the group (etcd has lost its majority, so the broadcast cannot be
    ordered) is a wait the pool is told of: another connection is served at once.
    """
    server = group.servers[0]
    server.stop()
    server.start(
        "--thread-handling=pool-of-threads",
        "--thread-pool-size=1",
        "--thread-pool-stall-limit=60000",
    )
    group.bootstrap(0)
    group.wait_states(0, ["ONLINE"])
    server.query("CREATE DATABASE d")
    server.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    etcd.kill(1)
    etcd.kill(2)
    outcome: list[object] = []

    def write() -> None:
        try:
            server.query("INSERT INTO d.t VALUES (1)")
            outcome.append("committed")
        except pymysql.err.MySQLError as exc:
            outcome.append(exc)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    time.sleep(1.0)  # the INSERT is in before_commit, its broadcast waiting for etcd
    connection = server.connect(read_timeout=8, connect_timeout=8)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW PROCESSLIST")
            states = {str(row[7]): row[6] for row in cursor.fetchall()}
    finally:
        connection.close()
    assert not outcome, outcome  # the write was still blocked while the pool served this
    # the session's state while the hook holds it, as MySQL's stage in ha_commit_trans
    assert states.get("INSERT INTO d.t VALUES (1)") == "waiting for handler commit", states
