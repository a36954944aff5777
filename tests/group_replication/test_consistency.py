"""group_replication_consistency (WL#10379) on real servers and etcd members: BEFORE
waits at a transaction's start for what the group ordered before it; the variable's
scopes, privileges and refused values; the levels refused outside ONLINE."""

from __future__ import annotations

import threading
import time
from typing import Any

import pymysql
import pytest

from rpl.core.testing.group import Group, wait_until

PROCESSLIST_STATE = "Executing hook on transaction begin."
PAUSE = "pause_plugin_applier"
"""The server's sync point that holds the Group Replication applier (rpl.core.debug)."""


@pytest.fixture
def group_size() -> int:
    return 2


def _pair(group: Group) -> tuple[Any, Any]:
    """A primary and a secondary holding ``d.t`` with the row 1."""
    group.bootstrap(0)
    group.join(1)
    group.wait_states(1, ["ONLINE"] * 2)
    primary, secondary = group.servers
    primary.query("CREATE DATABASE d")
    primary.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    primary.query("INSERT INTO d.t VALUES (1)")
    wait_until(lambda: secondary.query("SELECT COUNT(*) FROM d.t") == [(1,)])
    return primary, secondary


def _count(connection: Any) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM d.t")
        return int(cursor.fetchone()[0])


def test_before_reads_what_the_group_ordered_before_it(group: Group) -> None:
    primary, secondary = _pair(group)
    secondary.query(f"SET GLOBAL debug = '+d,{PAUSE}'")  # the secondary's applier waits
    primary.query("INSERT INTO d.t VALUES (2)")  # acknowledged
    reader = secondary.connect()
    time.sleep(1)
    assert _count(reader) == 1  # EVENTUAL: a stale read, the applier is behind
    reader.cursor().execute("SET SESSION group_replication_consistency = 'BEFORE'")
    seen: list[int] = []
    waiting = threading.Thread(target=lambda: seen.append(_count(reader)))
    waiting.start()

    def shown_waiting() -> bool:
        states = secondary.query(
            f"SELECT STATE FROM information_schema.PROCESSLIST WHERE ID = {reader.thread_id()}"
        )
        listed = [r for r in secondary.query("SHOW PROCESSLIST") if r[0] == reader.thread_id()]
        threads = secondary.query(
            "SELECT PROCESSLIST_STATE FROM performance_schema.threads "
            f"WHERE PROCESSLIST_ID = {reader.thread_id()}"
        )
        return bool(
            states == threads == [(PROCESSLIST_STATE,)] and listed[0][6] == PROCESSLIST_STATE
        )

    wait_until(shown_waiting, 20, lambda: str(secondary.query("SHOW PROCESSLIST")))
    assert not seen, "the BEFORE read ran before the applier had the row"
    secondary.query(f"SET GLOBAL debug = '-d,{PAUSE}'")
    waiting.join(30)
    assert seen == [2]
    # a write at BEFORE on the primary, and the global value for new sessions
    primary.query("SET GLOBAL group_replication_consistency = 'BEFORE'")
    primary.query("INSERT INTO d.t VALUES (3)")
    assert secondary.query("SELECT @@GLOBAL.group_replication_consistency") == [("EVENTUAL",)]
    assert primary.query("SELECT @@SESSION.group_replication_consistency") == [("BEFORE",)]
    reader.close()


def test_before_times_out_with_mysqls_error(group: Group) -> None:
    primary, secondary = _pair(group)
    secondary.query(f"SET GLOBAL debug = '+d,{PAUSE}'")
    primary.query("INSERT INTO d.t VALUES (2)")
    reader = secondary.connect()
    with reader.cursor() as cursor:
        cursor.execute("SET SESSION wait_timeout = 2")
        cursor.execute("SET SESSION group_replication_consistency = 'BEFORE'")
        began = time.monotonic()
        with pytest.raises(pymysql.err.MySQLError) as failure:
            cursor.execute("SELECT COUNT(*) FROM d.t")
    assert time.monotonic() - began >= 1.5
    assert failure.value.args == (
        3797,
        "Error while waiting for group transactions commit on "
        "group_replication_consistency= 'BEFORE'.",
    )
    secondary.query(f"SET GLOBAL debug = '-d,{PAUSE}'")
    wait_until(lambda: _count(reader) == 2)  # the session goes on
    reader.close()


def test_the_variable_scopes_privileges_and_values(group: Group) -> None:
    server = group.servers[0]
    assert server.query("SELECT @@GLOBAL.group_replication_consistency") == [("EVENTUAL",)]
    server.query("CREATE USER 'app'@'%' IDENTIFIED BY 'pw'")
    server.query("GRANT SYSTEM_VARIABLES_ADMIN ON *.* TO 'app'@'%'")
    app = {"user": "app", "password": "pw"}
    server.query("SET SESSION group_replication_consistency = 'BEFORE'", **app)  # no privilege
    with pytest.raises(pymysql.err.MySQLError) as refused:
        server.query("SET GLOBAL group_replication_consistency = 'BEFORE'", **app)
    assert refused.value.args[0] == 1227
    assert "SUPER or GROUP_REPLICATION_ADMIN" in refused.value.args[1]
    server.query("GRANT GROUP_REPLICATION_ADMIN ON *.* TO 'app'@'%'")
    server.query("SET GLOBAL group_replication_consistency = 'before'", **app)
    assert server.query("SELECT @@GLOBAL.group_replication_consistency") == [("BEFORE",)]
    for value in ("'FOO'", "'BEFORE_ON_PRIMARY_FAILOVER'", "7"):
        for scope in ("GLOBAL", "SESSION"):
            with pytest.raises(pymysql.err.MySQLError) as bad:
                server.query(f"SET {scope} group_replication_consistency = {value}")
            assert bad.value.args[0] == 1231, (scope, value, bad.value.args)
    assert server.query("SELECT @@GLOBAL.group_replication_consistency") == [("BEFORE",)]
    for level in ("AFTER", "BEFORE_AND_AFTER", "EVENTUAL"):
        server.query(f"SET GLOBAL group_replication_consistency = '{level}'", **app)
        assert server.query("SELECT @@GLOBAL.group_replication_consistency") == [(level,)]
    server.query("SET GLOBAL group_replication_consistency = 3")  # MySQL's ENUM number
    assert server.query("SELECT @@GLOBAL.group_replication_consistency") == [("AFTER",)]
    # OFFLINE (Group Replication not started): not intercepted
    server.query("CREATE DATABASE d")
    assert server.query("SELECT COUNT(*) FROM information_schema.SCHEMATA") != []


def test_consistent_levels_are_refused_outside_online(group: Group) -> None:
    """FR-04: a RECOVERING, ERROR or UNREACHABLE member refuses BEFORE, AFTER and
    BEFORE_AND_AFTER with 3796."""
    group.bootstrap(0)
    group.wait_states(0, ["ONLINE"])
    server = group.servers[0]
    server.query("CREATE DATABASE d")
    server.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    stray = b"garbage"  # a message no member can read: ERROR, still serving reads
    import base64
    import urllib.request

    sender = server.query("SELECT @@server_uuid")[0][0]
    from rpl.core.testing.group import GROUP_NAME

    key = base64.b64encode(f"/rpl/gr/{GROUP_NAME}/msg/{sender}/x-1".encode()).decode()
    body = f'{{"key":"{key}","value":"{base64.b64encode(stray).decode()}"}}'.encode()
    request = urllib.request.Request(f"http://{group.etcd.endpoints[0]}/v3/kv/put", data=body)
    with urllib.request.urlopen(request, timeout=5):
        pass
    wait_until(lambda: group.members(0)[0][2] == "ERROR", 30, lambda: str(group.members(0)))
    connection = server.connect()
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM d.t")  # EVENTUAL: not refused
        for level in ("BEFORE", "AFTER", "BEFORE_AND_AFTER"):
            cursor.execute(f"SET SESSION group_replication_consistency = '{level}'")
            with pytest.raises(pymysql.err.MySQLError) as refused:
                cursor.execute("SELECT COUNT(*) FROM d.t")
            assert refused.value.args == (
                3796,
                "The option group_replication_consistency cannot be used on the current "
                "member state.",
            ), level
    connection.close()
