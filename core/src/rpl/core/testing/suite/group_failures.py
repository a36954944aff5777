"""Group Replication, AFTER under membership changes (WL#10379 FR-07, FR-08, FR-09,
FR-12): members leaving (the origin or another), an unreachable member, a lost majority
re-formed with ``group_replication_force_members``, members joining (RECOVERING); and
BEFORE_ON_PRIMARY_FAILOVER: a new primary's hold while it applies the old one's backlog.
"""

from __future__ import annotations

import threading
import time

from rpl.core.testing.group import Statement, session_state, wait_until
from rpl.core.testing.suite.group_fixtures import (
    ER_RUN_HOOK_ERROR,
    GroupFixtures,
    Groups,
    count,
    holds_new_transactions,
    refused,
    shows,
    with_table,
)
from rpl.core.testing.suite.requirements import requires

ER_OPTION_PREVENTS_STATEMENT = 1290
ER_GR_HOLD_WAIT_TIMEOUT = 3781
HOOK_STATE = "Executing hook on transaction begin."
PAUSE_COMMITS = "pause_before_sync_binlog"
"""The server's sync point that holds every commit before the binlog sync: a joiner with
it armed stays RECOVERING (its recovery cannot commit what the donor sends)."""


class GroupFailuresSuite(GroupFixtures):
    """AFTER under failures and membership changes. Abstract: subclass it as ``Test...``."""

    @requires("after_consistency")
    def test_an_unreachable_member_holds_the_commit_until_it_is_expelled(
        self, groups: Groups
    ) -> None:
        """FR-08 then FR-07, the checklist's "unreachable member": M3, killed before it
        prepared, is UNREACHABLE while a majority remains: the commit waits; once the
        group expels it, the commit returns and M2 reads the row.
        """
        group = groups.formed(3)
        m1, m2, _ = group.servers
        group.pause_applier(2)
        write = Statement(m1, "INSERT INTO d.t VALUES (2)", "AFTER")
        write.start()
        wait_until(lambda: holds_new_transactions(m2), 30)  # delivered, M2 prepared
        group.kill_member(2)
        wait_until(lambda: "UNREACHABLE" in group.states(0), 30, lambda: str(group.members(0)))
        assert not write.done.is_set(), f"AFTER committed with M3 unreachable: {write.error}"
        wait_until(lambda: len(group.members(0)) == 2, 60, lambda: str(group.members(0)))
        write.finish()
        assert write.error is None, write.error
        assert count(m2, "id = 2") == 1

    @requires("after_consistency")
    def test_stop_on_the_origin_rolls_back_locally_and_the_group_commits(
        self, groups: Groups
    ) -> None:
        """FR-12 and FR-07, the checklist's "member leave (origin)": the origin runs STOP
        GROUP_REPLICATION while its AFTER transaction waits: its client gets
        ER_RUN_HOOK_ERROR (3100), the origin has no row, the remaining members commit it.
        """
        group = groups.formed(3, group_replication_single_primary_mode="OFF")
        m1, m2, m3 = group.servers
        group.pause_applier(2)
        write = Statement(m1, "INSERT INTO d.t VALUES (2)", "AFTER")
        write.start()
        wait_until(lambda: holds_new_transactions(m2), 30)
        m1.query("STOP GROUP_REPLICATION")
        write.finish()
        assert write.error is not None and write.error[0] == ER_RUN_HOOK_ERROR, write.error
        assert count(m1, "id = 2") == 0
        group.pause_applier(2, paused=False)
        for server in (m2, m3):
            wait_until(shows(server, 1, "id = 2"))

    @requires("after_consistency")
    def test_a_member_leaving_before_it_prepared_releases_the_commit(self, groups: Groups) -> None:
        """FR-07, the checklist's "member leave (non-origin)": M3, which has not
        prepared the AFTER transaction, runs STOP GROUP_REPLICATION: its leaving counts
        as its acknowledgement, the origin's client has OK and M2 reads the row.
        """
        group = groups.formed(3)
        m1, m2, m3 = group.servers
        group.pause_applier(2)
        write = Statement(m1, "INSERT INTO d.t VALUES (2)", "AFTER")
        write.start()
        wait_until(lambda: holds_new_transactions(m2), 30)
        assert not write.done.is_set()
        leaving = threading.Thread(target=m3.query, args=("STOP GROUP_REPLICATION",))
        leaving.start()  # its paused applier may hold STOP until it is let go
        try:
            write.finish(60)
            assert write.error is None, write.error
            assert count(m1, "id = 2") == 1 and count(m2, "id = 2") == 1
            assert len(group.members(0)) == 2
        finally:
            group.pause_applier(2, paused=False)
            leaving.join(60)

    @requires("after_consistency", "force_members")
    def test_after_resumes_with_the_membership_forced_after_majority_loss(
        self, groups: Groups
    ) -> None:
        """FR-09, the checklist's "majority loss": M1's AFTER transaction waits for M3;
        M1 (its origin) and M3 are killed, M2 alone has no majority and holds it (and
        new transactions); once M2's etcd member is re-formed alone and
        ``group_replication_force_members`` names M2 only, the transaction goes on
        with the new membership although its origin left: M2 commits it, the held
        read returns it, new writes commit.
        """
        group = groups.start(3)
        group.form(group_replication_member_expel_timeout=60)  # no expel: blocked
        with_table(group)
        m1, m2, _ = group.servers
        group.pause_applier(2)
        write = Statement(m1, "INSERT INTO d.t VALUES (2)", "AFTER")
        write.start()
        wait_until(lambda: holds_new_transactions(m2), 30)
        group.kill_member(0)
        group.kill_member(2)
        group.wait_states(1, ["ONLINE", "UNREACHABLE", "UNREACHABLE"], timeout=60)
        held = Statement(m2, "SELECT COUNT(*) FROM d.t")
        held.start()
        assert not held.done.wait(2), f"M2 ran a transaction past a prepared one: {held.error}"
        group.etcd.force_new_cluster(1)
        m2.query(f"SET GLOBAL group_replication_force_members = '{group.etcd.endpoints[1]}'")
        held.finish(60)
        assert held.error is None and held.rows == [(2,)], (held.error, held.rows)
        assert group.states(1) == ["ONLINE"]
        m2.query("SET GLOBAL group_replication_force_members = ''")
        m2.query("INSERT INTO d.t VALUES (3)")
        assert count(m2) == 3

    @requires("after_consistency")
    def test_a_joiner_stays_recovering_until_an_after_transaction_completes(
        self, groups: Groups
    ) -> None:
        """The checklist's "A joining member stays RECOVERING until an in-flight AFTER
        transaction completes": M3 joins while an AFTER transaction waits for M2's
        acknowledgement; it stays RECOVERING (its donor has not committed it) and is
        not waited for; once the transaction completes M3 goes ONLINE and has it.
        """
        group = groups.start(3)
        group.bootstrap(0)
        group.join(1)
        group.wait_states(0, ["ONLINE"] * 2)
        with_table(group, row=False)
        m1, _, m3 = group.servers
        group.pause_applier(1)
        write = Statement(m1, "INSERT INTO d.t VALUES (1)", "AFTER")
        write.start()
        assert not write.done.wait(1)
        group.join(2)
        wait_until(lambda: group.states(0) == ["ONLINE", "ONLINE", "RECOVERING"], 30)
        time.sleep(3)  # what is checked is that nothing changes meanwhile
        assert group.states(0) == ["ONLINE", "ONLINE", "RECOVERING"]
        assert not write.done.is_set()
        group.pause_applier(1, paused=False)
        write.finish()
        assert write.error is None, write.error
        group.wait_states(2, ["ONLINE"] * 3)
        assert count(m3) == 1

    @requires("after_consistency")
    def test_a_recovering_member_is_not_waited_for(self, groups: Groups) -> None:
        """The checklist's "A RECOVERING member is not waited for": M3 is RECOVERING
        (its recovery cannot commit) when an AFTER transaction is delivered: the
        transaction commits once M2 prepared it, without M3's acknowledgement; M3 then
        goes ONLINE and has it.
        """
        group = groups.start(3)
        group.bootstrap(0)
        group.join(1)
        group.wait_states(0, ["ONLINE"] * 2)
        with_table(group)
        m1, m2, m3 = group.servers
        m3.query(f"SET GLOBAL debug = '+d,{PAUSE_COMMITS}'")
        group.join(2)
        wait_until(lambda: group.states(0) == ["ONLINE", "ONLINE", "RECOVERING"], 30)
        write = Statement(m1, "INSERT INTO d.t VALUES (2)", "AFTER")
        write.start()
        write.finish(30)
        assert write.error is None, write.error
        assert group.states(0) == ["ONLINE", "ONLINE", "RECOVERING"]
        assert count(m2, "id = 2") == 1
        m3.query(f"SET GLOBAL debug = '-d,{PAUSE_COMMITS}'")
        group.wait_states(2, ["ONLINE"] * 3)
        wait_until(shows(m3, 2))

    @requires("before_on_primary_failover")
    def test_a_new_primary_holds_before_on_primary_failover_until_its_backlog_is_applied(
        self, groups: Groups
    ) -> None:
        """BEFORE_ON_PRIMARY_FAILOVER: the primary M1 is killed after its client had OK
        for row 2, which M2 (the heaviest member, so the next primary) has received but
        not applied. On M2, elected, a read at BEFORE_ON_PRIMARY_FAILOVER waits in
        "Executing hook on transaction begin." (3781 at ``wait_timeout``), while
        EVENTUAL is not held: its read misses row 2 and its write gets 1290 (still
        read-only). Once the backlog is applied the held read finds row 2 and writes go.
        """
        group = groups.start(3)
        group.bootstrap(0)
        group.join(1, group_replication_member_weight=90)
        group.join(2)
        group.wait_states(0, ["ONLINE"] * 3)
        with_table(group)
        m1, m2, _ = group.servers
        group.pause_applier(1)
        m1.query("INSERT INTO d.t VALUES (2)")
        queue = (
            "SELECT COUNT_TRANSACTIONS_REMOTE_IN_APPLIER_QUEUE FROM "
            "performance_schema.replication_group_member_stats WHERE MEMBER_ID = @@server_uuid"
        )
        wait_until(lambda: int(m2.query(queue)[0][0]) >= 1, 30)
        group.kill_member(0)
        primary = "SELECT MEMBER_ROLE FROM performance_schema.replication_group_members "
        mine = primary + "WHERE MEMBER_ID = @@server_uuid"
        wait_until(lambda: m2.query(mine) == [("PRIMARY",)], 60, lambda: str(group.members(1)))
        held = Statement(m2, "SELECT COUNT(*) FROM d.t WHERE id = 2", "BEFORE_ON_PRIMARY_FAILOVER")
        held.start()
        wait_until(lambda: session_state(m2, held.thread_id) == HOOK_STATE, 30)
        assert count(m2, "id = 2") == 0  # EVENTUAL: not held, and stale
        write = refused(m2, "INSERT INTO d.t VALUES (3)", "EVENTUAL")
        assert write[0] == ER_OPTION_PREVENTS_STATEMENT, write
        level = "BEFORE_ON_PRIMARY_FAILOVER"
        late = Statement(m2, "SELECT COUNT(*) FROM d.t", level, wait_timeout=1)
        late.start()
        late.finish()
        assert late.error is not None and late.error[0] == ER_GR_HOLD_WAIT_TIMEOUT, late.error
        assert not held.done.is_set(), f"released before the backlog: {held.rows} {held.error}"
        group.pause_applier(1, paused=False)
        held.finish()
        assert held.error is None and held.rows == [(1,)], (held.rows, held.error)
        after = Statement(m2, "INSERT INTO d.t VALUES (3)", "BEFORE_ON_PRIMARY_FAILOVER")
        after.start()
        after.finish()
        assert after.error is None, after.error
        assert count(m2) == 3
