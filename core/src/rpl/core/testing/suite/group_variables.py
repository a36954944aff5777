"""Group Replication, ``group_replication_consistency`` and where its levels may be used
(WL#10379 FR-04, FR-10, FR-11): the variable's scopes, values and privilege; the levels
refused outside ONLINE and not intercepted on OFFLINE; a member older than 8.0.14.
"""

from __future__ import annotations

import pymysql
import pytest

from rpl.core.testing.group import Statement, wait_until
from rpl.core.testing.suite.group_failures import PAUSE_COMMITS
from rpl.core.testing.suite.group_fixtures import (
    CONSISTENT_LEVELS,
    ER_GRP_TRX_CONSISTENCY_NOT_ALLOWED,
    GroupFixtures,
    Groups,
    count,
    refused,
    shows,
    with_table,
)
from rpl.core.testing.suite.requirements import requires

NOT_ALLOWED = (
    ER_GRP_TRX_CONSISTENCY_NOT_ALLOWED,
    "The option group_replication_consistency cannot be used on the current member state.",
)
ER_TRANSACTION_ROLLBACK_DURING_COMMIT = 3101
OLD_VERSION = "8.0.13"
MULTI_PRIMARY = {"group_replication_single_primary_mode": "OFF"}


class GroupVariablesSuite(GroupFixtures):
    """The variable and where its levels apply. Abstract: subclass it as ``Test...``."""

    def test_the_variable_scopes_privileges_and_values(self, groups: Groups) -> None:
        """The checklist's "``group_replication_consistency``: SESSION and GLOBAL;
        invalid values rejected; GLOBAL needs admin privilege": EVENTUAL by default;
        SESSION needs no privilege; GLOBAL without SUPER or GROUP_REPLICATION_ADMIN
        fails with 1227; values in any letter case and MySQL's ENUM numbers are taken,
        others fail with 1231 in both scopes and change nothing.
        """
        server = groups.start(1, etcd=1).servers[0]
        assert server.query("SELECT @@GLOBAL.group_replication_consistency") == [("EVENTUAL",)]
        server.query("CREATE USER 'app'@'%' IDENTIFIED BY 'pw'")
        server.query("GRANT SYSTEM_VARIABLES_ADMIN ON *.* TO 'app'@'%'")
        app = {"user": "app", "password": "pw"}
        server.query("SET SESSION group_replication_consistency = 'BEFORE'", **app)
        with pytest.raises(pymysql.err.MySQLError) as denied:
            server.query("SET GLOBAL group_replication_consistency = 'BEFORE'", **app)
        assert denied.value.args[0] == 1227
        assert "SUPER or GROUP_REPLICATION_ADMIN" in denied.value.args[1]
        server.query("GRANT GROUP_REPLICATION_ADMIN ON *.* TO 'app'@'%'")
        server.query("SET GLOBAL group_replication_consistency = 'before'", **app)
        assert server.query("SELECT @@GLOBAL.group_replication_consistency") == [("BEFORE",)]
        for value in ("'FOO'", "'BEFORE_ON_PRIMARY_FAILOVER_'", "7", "''"):
            for scope in ("GLOBAL", "SESSION"):
                with pytest.raises(pymysql.err.MySQLError) as bad:
                    server.query(f"SET {scope} group_replication_consistency = {value}")
                assert bad.value.args[0] == 1231, (scope, value, bad.value.args)
        assert server.query("SELECT @@GLOBAL.group_replication_consistency") == [("BEFORE",)]
        for level in ("AFTER", "BEFORE_AND_AFTER", "BEFORE_ON_PRIMARY_FAILOVER", "EVENTUAL"):
            server.query(f"SET GLOBAL group_replication_consistency = '{level}'", **app)
            assert server.query("SELECT @@GLOBAL.group_replication_consistency") == [(level,)]
        server.query("SET GLOBAL group_replication_consistency = 3")  # MySQL's ENUM number
        assert server.query("SELECT @@GLOBAL.group_replication_consistency") == [("AFTER",)]
        connection = server.connect()  # a new session takes the GLOBAL value
        with connection.cursor() as cursor:
            cursor.execute("SELECT @@SESSION.group_replication_consistency")
            assert cursor.fetchall() == (("AFTER",),)
        connection.close()

    def test_consistent_levels_are_refused_outside_online(self, groups: Groups) -> None:
        """FR-04 and the checklist's "Levels refused in RECOVERING, ERROR and OFFLINE
        states": on a member in ERROR (its applier failed) and on one RECOVERING (its
        recovery cannot commit), BEFORE, AFTER and BEFORE_AND_AFTER fail with
        ER_GRP_TRX_CONSISTENCY_NOT_ALLOWED (3796) while EVENTUAL reads go on; OFFLINE
        (after STOP GROUP_REPLICATION) is FR-04's exception: no level is intercepted.
        """
        group = groups.start(3)
        group.bootstrap(0, **MULTI_PRIMARY)
        group.join(1, **MULTI_PRIMARY)
        group.wait_states(0, ["ONLINE"] * 2)
        with_table(group)
        m1, m2, m3 = group.servers
        # ERROR: M2 holds a row the group does not know, the group's insert of it fails
        # in M2's applier
        m2.query("SET GLOBAL super_read_only = OFF")
        connection = m2.connect()
        with connection.cursor() as cursor:
            cursor.execute("SET SESSION sql_log_bin = 0")
            cursor.execute("INSERT INTO d.t VALUES (9)")
        connection.close()
        m1.query("INSERT INTO d.t VALUES (9)")
        wait_until(lambda: group.states(1) == ["ERROR"], 30, lambda: str(group.members(1)))
        assert count(m2) == 2  # EVENTUAL: not refused
        for level in CONSISTENT_LEVELS:
            assert refused(m2, "SELECT COUNT(*) FROM d.t", level) == NOT_ALLOWED, level
        # RECOVERING; a table of its own to read meanwhile (not logged: not the group's)
        connection = m3.connect()
        with connection.cursor() as cursor:
            cursor.execute("SET SESSION sql_log_bin = 0")
            cursor.execute("CREATE DATABASE own")
            cursor.execute("CREATE TABLE own.t (id INT PRIMARY KEY)")
        connection.close()
        m3.query(f"SET GLOBAL debug = '+d,{PAUSE_COMMITS}'")
        group.join(2, **MULTI_PRIMARY)
        wait_until(lambda: "RECOVERING" in group.states(2), 30, lambda: str(group.members(2)))
        own = "SELECT COUNT(*) FROM own.t"
        assert m3.query(own) == [(0,)]  # EVENTUAL: not refused
        for level in CONSISTENT_LEVELS:
            assert refused(m3, own, level) == NOT_ALLOWED, level
        m3.query(f"SET GLOBAL debug = '-d,{PAUSE_COMMITS}'")
        group.wait_states(2, ["ONLINE"] * 2)
        # OFFLINE: not intercepted
        m3.query("STOP GROUP_REPLICATION")
        assert group.states(2) == ["OFFLINE"]
        for level in CONSISTENT_LEVELS:
            read = Statement(m3, "SELECT COUNT(*) FROM d.t", level)
            read.run()
            assert read.error is None and read.rows == [(2,)], (level, read.error)

    @requires("after_consistency", "member_version_override")
    def test_a_member_older_than_8_0_14_makes_after_roll_back(self, groups: Groups) -> None:
        """FR-10: in a group with a member announcing 8.0.13 (MEMBER_VERSION in
        replication_group_members), AFTER and BEFORE_AND_AFTER writes roll back at
        commit (ER_TRANSACTION_ROLLBACK_DURING_COMMIT, 3101) on every member alike, on
        the old member too, and leave no row anywhere; EVENTUAL ones commit.
        """
        group = groups.start(2, versions={0: OLD_VERSION})
        group.form(**MULTI_PRIMARY)  # the old member bootstraps: newer ones may join it
        with_table(group)
        m1, m2 = group.servers
        versions = {
            r[0]
            for r in m2.query(
                "SELECT MEMBER_VERSION FROM performance_schema.replication_group_members"
            )
        }
        assert OLD_VERSION in versions and len(versions) == 2, versions
        for number, level in enumerate(("AFTER", "BEFORE_AND_AFTER"), start=2):
            for server in (m2, m1):
                write = Statement(server, f"INSERT INTO d.t VALUES ({number})", level)
                write.run()
                assert write.error is not None, level
                assert write.error[0] == ER_TRANSACTION_ROLLBACK_DURING_COMMIT, write.error
        m2.query("INSERT INTO d.t VALUES (5)")
        wait_until(shows(m1, 1, "id = 5"))
        assert count(m1) == count(m2) == 2

    @requires("before_consistency", "member_version_override")
    def test_before_works_beside_a_member_older_than_8_0_14(self, groups: Groups) -> None:
        """FR-11: BEFORE on a member that supports it works in a group with a member
        announcing 8.0.13: a BEFORE read on the new member waits for T1 written on the
        old one and reads it; a BEFORE write there commits.
        """
        group = groups.start(2, versions={0: OLD_VERSION})
        group.form(**MULTI_PRIMARY)
        with_table(group)
        old, new = group.servers
        group.pause_applier(1)
        old.query("INSERT INTO d.t VALUES (2)")  # T1
        read = Statement(new, "SELECT COUNT(*) FROM d.t", "BEFORE")
        read.start()
        assert not read.done.wait(2), f"the BEFORE read did not wait for T1: {read.rows}"
        group.pause_applier(1, paused=False)
        read.finish()
        assert read.error is None and read.rows == [(2,)], (read.error, read.rows)
        write = Statement(new, "INSERT INTO d.t VALUES (3)", "BEFORE")
        write.run()
        assert write.error is None, write.error
        wait_until(shows(old, 1, "id = 3"))
