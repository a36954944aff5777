"""Group Replication, AFTER and BEFORE_AND_AFTER (WL#10379 FR-02, FR-03, FR-05, FR-06):
the commit waits for every ONLINE member's prepared acknowledgement, the members that
prepared hold new transactions until they commit; a group of one commits at once.
"""

from __future__ import annotations

from rpl.core.testing.group import HELD, Statement, global_status, session_state, wait_until
from rpl.core.testing.process import ServerProcess
from rpl.core.testing.suite.group_fixtures import (
    ER_GRP_TRX_CONSISTENCY_AFTER_ON_TRX_BEGIN,
    LEVELS,
    GroupFixtures,
    Groups,
    count,
    holds_new_transactions,
)
from rpl.core.testing.suite.requirements import requires

MULTI_PRIMARY = {"group_replication_single_primary_mode": "OFF"}


class GroupAfterSuite(GroupFixtures):
    """AFTER and BEFORE_AND_AFTER. Abstract: subclass it as ``Test...``."""

    @requires("after_consistency")
    def test_after_commits_once_every_online_member_prepared(self, groups: Groups) -> None:
        """FR-05 and FR-02, the checklist's "AFTER blocks while one member cannot
        prepare; new transactions before that member prepared run": the AFTER commit
        waits while M3's applier cannot prepare it, its row is invisible on M1
        meanwhile and M3 holds nobody; once M3 prepared, the client has OK and every
        ONLINE member reads the row at once, EVENTUAL readers too.
        """
        group = groups.formed(3)
        m1, m2, m3 = group.servers
        group.pause_applier(2)  # M3 cannot prepare
        write = Statement(m1, "INSERT INTO d.t VALUES (2)", "AFTER")
        write.start()
        assert not write.done.wait(3), f"AFTER committed before M3 prepared: {write.error}"
        assert count(m1, "id = 2") == 0  # not externalized on its origin
        assert not holds_new_transactions(m3)  # M3 did not prepare: not held
        assert count(m3) == 1
        group.pause_applier(2, paused=False)
        write.finish()
        assert write.error is None, write.error
        for server in (m1, m2, m3):
            assert count(server, "id = 2") == 1
        gtids = {s.query("SELECT @@gtid_executed")[0][0] for s in group.servers}
        assert len(gtids) == 1, gtids

    @requires("after_consistency")
    def test_a_member_that_prepared_holds_new_transactions_until_it_commits(
        self, groups: Groups
    ) -> None:
        """FR-06 (E2), the checklist's "after it prepared but before it committed they
        are held": M2 prepared and acknowledged, M3 did not: M2 holds every new
        transaction, EVENTUAL ones too, in "Executing hook on transaction begin."
        (PROCESSLIST, performance_schema.threads) until the AFTER transaction commits
        there; one held past its ``wait_timeout`` fails with 3798; the held read then
        reads the row.
        """
        group = groups.formed(3)
        m1, m2, _ = group.servers
        group.pause_applier(2)
        write = Statement(m1, "INSERT INTO d.t VALUES (2)", "AFTER")
        write.start()
        wait_until(lambda: holds_new_transactions(m2), 30)  # M2 prepared: 3798 after 1 s
        held = Statement(m2, "SELECT COUNT(*) FROM d.t")
        held.start()
        wait_until(
            lambda: session_state(m2, held.thread_id) == HELD,
            20,
            lambda: str(m2.query("SHOW PROCESSLIST")),
        )
        listed = [r for r in m2.query("SHOW PROCESSLIST") if r[0] == held.thread_id]
        assert listed[0][6] == HELD
        threads = m2.query(
            "SELECT TYPE, PROCESSLIST_STATE FROM performance_schema.threads "
            f"WHERE PROCESSLIST_ID = {held.thread_id}"
        )
        assert threads == [("FOREGROUND", HELD)]
        impatient = Statement(m2, "SELECT COUNT(*) FROM d.t", wait_timeout=1)
        impatient.run()
        assert impatient.error == (
            ER_GRP_TRX_CONSISTENCY_AFTER_ON_TRX_BEGIN,
            "Error while waiting for transactions with group_replication_consistency= "
            "'AFTER' to commit.",
        )
        assert not held.done.is_set() and not write.done.is_set()
        group.pause_applier(2, paused=False)
        write.finish()
        held.finish()
        assert write.error is None and held.error is None, (write.error, held.error)
        assert held.rows == [(2,)]  # it ran after the AFTER transaction committed on M2

    @requires("after_consistency")
    def test_with_three_members_only_the_second_acknowledgement_releases_the_commit(
        self, groups: Groups
    ) -> None:
        """The checklist's "Three members: only the second acknowledgement releases the
        commit": neither M2 nor M3 can prepare; M2 prepares (it then holds new
        transactions) and the commit still waits; M3 prepares and it returns.
        """
        group = groups.formed(3)
        m1, m2, m3 = group.servers
        group.pause_applier(1)
        group.pause_applier(2)
        write = Statement(m1, "INSERT INTO d.t VALUES (2)", "AFTER")
        write.start()
        assert not write.done.wait(2), write.error
        group.pause_applier(1, paused=False)  # the first acknowledgement
        wait_until(lambda: holds_new_transactions(m2), 30)
        assert not write.done.wait(2), f"one acknowledgement of two released it: {write.error}"
        assert count(m1, "id = 2") == 0
        group.pause_applier(2, paused=False)  # the second
        write.finish()
        assert write.error is None, write.error
        assert [count(s, "id = 2") for s in (m1, m2, m3)] == [1, 1, 1]

    @requires("after_consistency", "before_consistency")
    def test_before_and_after_waits_for_t1_and_holds_while_prepared(self, groups: Groups) -> None:
        """FR-03 and the checklist's "BEFORE_AND_AFTER writes wait for T1 and hold new
        transactions while prepared": on M2, whose applier is behind T1, a
        BEFORE_AND_AFTER read waits for T1 and reads it; a BEFORE_AND_AFTER write on M2
        waits for M3's acknowledgement while M1, which prepared it, holds new
        transactions; once it returns, M1 and M3 read it.
        """
        group = groups.formed(3, **MULTI_PRIMARY)
        m1, m2, m3 = group.servers
        group.pause_applier(1)
        m1.query("INSERT INTO d.t VALUES (2)")  # T1: M2 does not have it yet
        read = Statement(m2, "SELECT COUNT(*) FROM d.t", "BEFORE_AND_AFTER")
        read.start()
        wait_until(lambda: session_state(m2, read.thread_id) == HELD, 20)
        assert not read.done.wait(1), "BEFORE_AND_AFTER read before M2 had T1"
        group.pause_applier(1, paused=False)
        read.finish()
        assert read.error is None and read.rows == [(2,)], (read.error, read.rows)
        group.pause_applier(2)
        write = Statement(m2, "INSERT INTO d.t VALUES (3)", "BEFORE_AND_AFTER")
        write.start()
        wait_until(lambda: holds_new_transactions(m1), 30)  # M1 prepared it
        assert not write.done.is_set(), write.error
        group.pause_applier(2, paused=False)
        write.finish()
        assert write.error is None, write.error
        assert count(m1, "id = 3") == 1 and count(m3, "id = 3") == 1

    def test_every_level_works_in_a_one_member_group(self, groups: Groups) -> None:
        """The checklist's "Every level works in a one-member group": at EVENTUAL,
        BEFORE, AFTER and BEFORE_AND_AFTER a write commits at once (no one to wait for)
        and a read at the level reads every write before it.
        """
        group = groups.start(1, etcd=1)
        group.bootstrap(0)
        group.wait_states(0, ["ONLINE"])
        server = group.servers[0]
        server.query("CREATE DATABASE d")
        server.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
        for number, level in enumerate(LEVELS, start=1):
            write = Statement(server, f"INSERT INTO d.t VALUES ({number})", level)
            write.start()
            write.finish(10)
            assert write.error is None, (level, write.error)
            read = Statement(server, "SELECT COUNT(*) FROM d.t", level)
            read.start()
            read.finish(10)
            assert read.error is None and read.rows == [(number,)], (level, read.rows)

    @requires("consistency_status_counters", "after_consistency", "before_consistency")
    def test_the_consistency_status_counters(self, groups: Groups) -> None:
        """``Gr_transactions_consistency_*`` count each wait where it happens: a BEFORE
        read's wait on its member (``before_begin``), an AFTER transaction on its origin
        from delivery to the last acknowledgement (``after_termination``, its time sum
        at least the wait), transactions held behind a prepared one on that member only
        (``after_sync``).
        """
        group = groups.formed(3)
        m1, m2, _ = group.servers
        names = ("before_begin", "after_termination", "after_sync")

        def counters(server: ServerProcess) -> dict[str, int]:
            return {
                n: global_status(server, f"Gr_transactions_consistency_{n}_count") for n in names
            }

        base = [counters(s) for s in (m1, m2)]
        group.pause_applier(2)
        write = Statement(m1, "INSERT INTO d.t VALUES (2)", "AFTER")
        write.start()
        wait_until(lambda: holds_new_transactions(m2), 30)  # one held transaction on M2
        assert not write.done.wait(1)
        group.pause_applier(2, paused=False)
        write.finish()
        assert write.error is None, write.error
        read = Statement(m2, "SELECT COUNT(*) FROM d.t", "BEFORE")
        read.run()
        assert read.error is None, read.error
        after = [counters(s) for s in (m1, m2)]
        delta = [{n: a[n] - b[n] for n in names} for a, b in zip(after, base, strict=True)]
        assert delta[0] == {"before_begin": 0, "after_termination": 1, "after_sync": 0}, delta
        assert delta[1]["before_begin"] == 1 and delta[1]["after_termination"] == 0, delta
        assert delta[1]["after_sync"] >= 1, delta
        spent = global_status(m1, "Gr_transactions_consistency_after_termination_time_sum")
        assert spent >= 1_000_000, spent  # microseconds: the commit waited more than 1 s
