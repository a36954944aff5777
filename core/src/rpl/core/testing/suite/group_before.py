"""Group Replication, BEFORE (WL#10379 FR-01): a transaction at BEFORE starts on the
most up-to-date data; the wait is shown in PROCESSLIST and bounded by ``wait_timeout``.
"""

from __future__ import annotations

import time

from rpl.core.testing.group import HELD, Statement, session_state, wait_until
from rpl.core.testing.suite.group_fixtures import (
    ER_GRP_TRX_CONSISTENCY_BEFORE,
    GroupFixtures,
    Groups,
    count,
    shows,
)
from rpl.core.testing.suite.requirements import requires


class GroupBeforeSuite(GroupFixtures):
    """BEFORE at a transaction's start. Abstract: subclass it as ``Test...``."""

    @requires("before_consistency")
    def test_before_reads_what_the_group_ordered_before_it(self, groups: Groups) -> None:
        """FR-01 and the checklist's "BEFORE reads on M2 wait for T1 from M1; other
        members are unaffected": with M2's applier behind, an EVENTUAL read on M2 is
        stale; a BEFORE read there waits in "Executing hook on transaction begin."
        (PROCESSLIST, SHOW PROCESSLIST, performance_schema.threads) until M2 committed
        T1, then reads it; meanwhile M1 and M2's EVENTUAL sessions are not held.
        """
        group = groups.formed(2)
        m1, m2 = group.servers
        group.pause_applier(1)
        m1.query("INSERT INTO d.t VALUES (2)")  # T1, acknowledged
        assert count(m2) == 1  # EVENTUAL: a stale read, the applier is behind
        read = Statement(m2, "SELECT COUNT(*) FROM d.t", "BEFORE")
        read.start()

        def shown_waiting() -> bool:
            listed = [r for r in m2.query("SHOW PROCESSLIST") if r[0] == read.thread_id]
            threads = m2.query(
                "SELECT PROCESSLIST_STATE FROM performance_schema.threads "
                f"WHERE PROCESSLIST_ID = {read.thread_id}"
            )
            return (
                session_state(m2, read.thread_id) == HELD
                and threads == [(HELD,)]
                and listed[0][6] == HELD
            )

        wait_until(shown_waiting, 20, lambda: str(m2.query("SHOW PROCESSLIST")))
        # other sessions and members go on: none of these waits for T1 on M2
        for server, level in ((m1, "BEFORE"), (m1, "EVENTUAL"), (m2, "EVENTUAL")):
            other = Statement(server, "SELECT COUNT(*) FROM d.t", level)
            other.start()
            other.finish(10)
            assert other.error is None, (level, other.error)
            assert other.rows == [(2 if server is m1 else 1,)], (level, other.rows)
        assert not read.done.is_set(), "the BEFORE read ran before M2 had T1"
        group.pause_applier(1, paused=False)
        read.finish()
        assert read.error is None and read.rows == [(2,)], (read.error, read.rows)
        # a write at BEFORE, and the GLOBAL value for new sessions of one member only
        m1.query("SET GLOBAL group_replication_consistency = 'BEFORE'")
        m1.query("INSERT INTO d.t VALUES (3)")
        assert m1.query("SELECT @@SESSION.group_replication_consistency") == [("BEFORE",)]
        assert m2.query("SELECT @@GLOBAL.group_replication_consistency") == [("EVENTUAL",)]
        wait_until(shows(m2, 3))

    @requires("before_consistency")
    def test_before_times_out_with_mysqls_error(self, groups: Groups) -> None:
        """FR-01's bound: a BEFORE read that cannot have the up-to-date data within the
        session's ``wait_timeout`` fails with ER_GRP_TRX_CONSISTENCY_BEFORE (3797) and
        MySQL's message; the session goes on.
        """
        group = groups.formed(2)
        m1, m2 = group.servers
        group.pause_applier(1)
        m1.query("INSERT INTO d.t VALUES (2)")
        read = Statement(m2, "SELECT COUNT(*) FROM d.t", "BEFORE", wait_timeout=2)
        began = time.monotonic()
        read.run()
        assert time.monotonic() - began >= 1.5
        assert read.error == (
            ER_GRP_TRX_CONSISTENCY_BEFORE,
            "Error while waiting for group transactions commit on "
            "group_replication_consistency= 'BEFORE'.",
        )
        group.pause_applier(1, paused=False)
        with read.connection.cursor() as cursor:
            cursor.execute("SET SESSION wait_timeout = 30")
            cursor.execute("SELECT COUNT(*) FROM d.t")  # the session goes on, at BEFORE
            assert cursor.fetchall() == ((2,),)
        read.connection.close()
